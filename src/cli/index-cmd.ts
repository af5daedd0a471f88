// `latch index create|list|get|delete|watch`: a store's permission indexes on a running server
// (docs/permission-indexes.md). create/delete need an account-level credential with the scope
// `manage:indexes` in authenticated modes; `watch` prints each ReadExpansions event as one JSON
// line until the stream closes, `--max-events` are printed, or the command is interrupted.

import { type FlagSpec, UsageError } from './args.js';
import { type Command, SERVER_FLAGS, STORE_FLAG, clientFrom, printJson } from './common.js';

const server = SERVER_FLAGS;
const INDEX_FLAG: FlagSpec = {
  name: 'index-id',
  kind: 'string',
  value: '<id>',
  env: 'LATCH_INDEX_ID',
  help: 'Permission index id',
};
const RELATION = /^([^:#@\s]+)#([^:#@\s]+)$/;

const create: Command = {
  spec: {
    path: 'index create',
    summary: 'Create a permission index over (type#relation) pairs',
    positionals: [],
    flags: [
      STORE_FLAG,
      { name: 'name', kind: 'string', value: '<name>', help: 'Index name (required)' },
      {
        name: 'relation',
        kind: 'list',
        value: '<type#relation>',
        help: 'An indexed relation, e.g. doc#viewer (repeatable, at least one)',
      },
      {
        name: 'model-id',
        kind: 'string',
        value: '<id>',
        env: 'LATCH_MODEL_ID',
        help: 'The model the index is assigned to (default: the latest)',
      },
      ...server,
    ],
    examples: [
      'latch index create --store-id 01H… --name doc-viewers --relation doc#viewer --api-url http://127.0.0.1:8080',
    ],
  },
  async run(args, io) {
    const relations = args.list('relation').map((r) => {
      const m = RELATION.exec(r);
      if (!m) throw new UsageError(`--relation '${r}': expected <type>#<relation>`);
      return { object_type: m[1] as string, relation: m[2] as string };
    });
    if (relations.length === 0) throw new UsageError('at least one --relation is required');
    const model = args.string('model-id');
    const body = { name: args.require('name'), relations, ...(model ? { authorization_model_id: model } : {}) };
    printJson(io, await clientFrom(args).createIndex(args.require('store-id', 'or set LATCH_STORE_ID'), body));
    return 0;
  },
};

const list: Command = {
  spec: {
    path: 'index list',
    summary: "List a store's permission indexes (every page)",
    positionals: [],
    flags: [STORE_FLAG, ...server],
  },
  async run(args, io) {
    const client = clientFrom(args);
    const store = args.require('store-id', 'or set LATCH_STORE_ID');
    const indexes = [];
    let token = '';
    do {
      const page = await client.listIndexes(store, { pageSize: 100, continuationToken: token || undefined });
      indexes.push(...page.indexes);
      token = page.continuation_token;
    } while (token);
    printJson(io, { indexes });
    return 0;
  },
};

const get: Command = {
  spec: {
    path: 'index get',
    summary: 'Show one permission index (status, counts, freshness)',
    positionals: [],
    flags: [STORE_FLAG, INDEX_FLAG, ...server],
  },
  async run(args, io) {
    printJson(
      io,
      await clientFrom(args).getIndex(
        args.require('store-id', 'or set LATCH_STORE_ID'),
        args.require('index-id', 'or set LATCH_INDEX_ID'),
      ),
    );
    return 0;
  },
};

const del: Command = {
  spec: {
    path: 'index delete',
    summary: 'Delete a permission index (its streams close)',
    positionals: [],
    flags: [STORE_FLAG, INDEX_FLAG, ...server],
  },
  async run(args, io) {
    const id = args.require('index-id', 'or set LATCH_INDEX_ID');
    await clientFrom(args).deleteIndex(args.require('store-id', 'or set LATCH_STORE_ID'), id);
    printJson(io, { deleted: id });
    return 0;
  },
};

const watch: Command = {
  spec: {
    path: 'index watch',
    summary: 'Stream an index: the current set, then live INSERT/DELETE events (one JSON line each)',
    positionals: [],
    flags: [
      STORE_FLAG,
      INDEX_FLAG,
      {
        name: 'from',
        kind: 'string',
        value: '<event-id>',
        help: 'Resume right after this event id (default: the whole current set first)',
      },
      {
        name: 'model-id',
        kind: 'string',
        value: '<id>',
        env: 'LATCH_MODEL_ID',
        help: "The index's model (default: read from the index)",
      },
      { name: 'max-events', kind: 'integer', min: 1, value: '<n>', help: 'Stop after this many expansion events' },
      ...server,
    ],
  },
  async run(args, io) {
    const client = clientFrom(args);
    const store = args.require('store-id', 'or set LATCH_STORE_ID');
    const id = args.require('index-id', 'or set LATCH_INDEX_ID');
    const model =
      args.string('model-id') ??
      ((await client.getIndex(store, id)).models as { model_id: string }[])[0]?.model_id ??
      '';
    const max = args.int('max-events') ?? Infinity;
    const ac = new AbortController();
    let seen = 0;
    try {
      for await (const e of client.expansions(
        store,
        id,
        { authorization_model_id: model, from: args.string('from') },
        ac.signal,
      )) {
        if ('heartbeat' in e) continue;
        io.out(JSON.stringify(e) + '\n');
        if ('expansion' in e && ++seen >= max) break;
        if ('closed' in e) break;
      }
    } finally {
      ac.abort();
    }
    return 0;
  },
};

export const indexCommands: readonly Command[] = [create, list, get, del, watch];
