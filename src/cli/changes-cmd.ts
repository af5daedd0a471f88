// `latch changes`: a store's change log, as `fga store changes` / ReadChanges gives it — every
// page from the start (or a token or time) to the end, printed as one JSON document — or with
// `--follow` the live Watch stream (docs/watch.md), one JSON line per change, each carrying the
// token that resumes right after it.

import { type Command, SERVER_FLAGS, STORE_FLAG, clientFrom, printJson } from './common.js';

const changes: Command = {
  spec: {
    path: 'changes',
    summary: "Read a store's tuple changes (ReadChanges); --follow streams new ones (Watch)",
    positionals: [],
    flags: [
      STORE_FLAG,
      { name: 'type', kind: 'string', value: '<type>', help: 'Only changes of objects of this type' },
      { name: 'start-time', kind: 'string', value: '<rfc3339>', help: 'Start at this time (ignored with a token)' },
      {
        name: 'continuation-token',
        kind: 'string',
        value: '<token>',
        help: 'Start right after the change this token names',
      },
      { name: 'follow', short: 'f', kind: 'boolean', help: 'After the log, stream each new change (one JSON line)' },
      {
        name: 'max-changes',
        kind: 'integer',
        min: 1,
        value: '<n>',
        help: 'Stop after this many changes (without --follow: after the page that reaches it)',
      },
      ...SERVER_FLAGS,
    ],
    examples: [
      'latch changes --store-id 01J… --type document',
      'latch changes --store-id 01J… --follow --continuation-token "$LAST"',
    ],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const client = clientFrom(args);
    const max = args.int('max-changes') ?? Infinity;
    const type = args.string('type');
    const startTime = args.string('start-time');
    let token = args.string('continuation-token') ?? '';
    if (args.bool('follow')) {
      const ac = new AbortController();
      let seen = 0;
      try {
        const q = { type, start_time: startTime, continuation_token: token || undefined };
        for await (const e of client.watch(storeId, q, ac.signal)) {
          if (!('change' in e)) continue;
          io.out(JSON.stringify(e) + '\n');
          if (++seen >= max) break;
        }
      } finally {
        ac.abort();
      }
      return 0;
    }
    const all: Record<string, unknown>[] = [];
    for (;;) {
      const page = await client.readChanges(storeId, {
        type,
        startTime,
        pageSize: 100,
        continuationToken: token || undefined,
      });
      all.push(...page.changes);
      if (page.continuation_token) token = page.continuation_token;
      if (page.changes.length === 0 || all.length >= max) break;
    }
    printJson(io, { changes: all, continuation_token: token });
    return 0;
  },
};

export const changesCommand = changes;
