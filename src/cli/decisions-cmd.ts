// `latch decisions …` against a running server (docs/audit.md): export a store's recorded
// decisions between two times as NDJSON (one decision per line, every page of the search),
// explain one recorded decision (replayed at its revision), and read or set the store's sampling.

import { type Command, SERVER_FLAGS, STORE_FLAG, clientFrom, printJson } from './common.js';

const exportCmd: Command = {
  spec: {
    path: 'decisions export',
    summary: "Print a store's recorded decisions as NDJSON (one per line, oldest first)",
    positionals: [],
    flags: [
      STORE_FLAG,
      { name: 'since', kind: 'string', value: '<rfc3339>', help: 'From this time (default: the retention horizon)' },
      { name: 'until', kind: 'string', value: '<rfc3339>', help: 'Up to this time, inclusive (default: now)' },
      { name: 'query', kind: 'string', value: '<lucene>', help: 'Only decisions matching it, e.g. operation:"Check"' },
      ...SERVER_FLAGS,
    ],
    examples: ['latch decisions export --store-id 01J… --since 2026-03-01T00:00:00Z --until 2026-03-31T23:59:59Z'],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const client = clientFrom(args);
    const q = { startTime: args.string('since'), endTime: args.string('until'), query: args.string('query') };
    let token: string | undefined;
    for (;;) {
      const page = await client.searchDecisions(storeId, { ...q, pageSize: 100, continuationToken: token });
      for (const d of page.decisions) io.out(JSON.stringify(d) + '\n');
      if (page.decisions.length === 0 || !page.continuation_token) return 0;
      token = page.continuation_token;
    }
  },
};

const explainCmd: Command = {
  spec: {
    path: 'decisions explain',
    summary: 'Replay a recorded decision at its revision and model: the why chain and whether it matches',
    positionals: [{ name: 'decision_id', help: 'The decision (its `id` in the export)' }],
    flags: [STORE_FLAG, ...SERVER_FLAGS],
    examples: ['latch decisions explain --store-id 01J… 01JQ…'],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const r = await clientFrom(args).explainDecision(storeId, args.arg('decision_id') as string);
    printJson(io, r);
    return r.equal === true ? 0 : 1;
  },
};

const samplingCmd: Command = {
  spec: {
    path: 'decisions sampling',
    summary: "Show a store's decision sampling, or set it (0–1; `default` for the server's)",
    positionals: [{ name: 'rate', optional: true, help: 'A number in [0, 1], or `default`' }],
    flags: [STORE_FLAG, ...SERVER_FLAGS],
    examples: ['latch decisions sampling --store-id 01J… 0.1'],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const rate = args.arg('rate');
    const value = rate === undefined ? undefined : rate === 'default' ? null : Number(rate);
    printJson(io, await clientFrom(args).decisionLog(storeId, value));
    return 0;
  },
};

export const decisionCommands: readonly Command[] = [exportCmd, explainCmd, samplingCmd];
