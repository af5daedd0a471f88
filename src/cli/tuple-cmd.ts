// `latch tuple write|delete|read` against a server (import and export: ./import-cmd.ts). One tuple from the arguments
// (`<user> <relation> <object>`, optional `--condition-name`/`--condition-context`) or many from a
// YAML/JSON/CSV file, written in chunks of ≤100 with a progress bar on a terminal; or, for
// delete, every tuple a `--filter` selects, in bounded requests until none is left.

import type { JsonObject, TupleKey } from '../domain/types.js';
import { type Args, type FlagSpec, UsageError } from './args.js';
import {
  type Command,
  MODEL_FLAG,
  ProgressBar,
  SERVER_FLAGS,
  STORE_FLAG,
  clientFrom,
  printJson,
  writeInChunks,
  writeReport,
} from './common.js';
import type { DeleteTuplesBody } from './http-client.js';
import { bulkCommands } from './import-cmd.js';
import { cleanTuple, isObject, readTupleFile, toCsv, toYaml } from './tuple-file.js';

const TUPLE_ARGS = [
  { name: 'user', optional: true, help: 'User, e.g. user:anne, group:eng#member, user:*' },
  { name: 'relation', optional: true, help: 'Relation, e.g. viewer' },
  { name: 'object', optional: true, help: 'Object, e.g. document:roadmap' },
];

const FILE: FlagSpec = {
  name: 'file',
  kind: 'string',
  value: '<file>',
  help: 'Tuples from a .yaml, .yml, .json or .csv file',
};
const CHUNK: FlagSpec = {
  name: 'chunk-size',
  kind: 'integer',
  min: 1,
  value: '<n>',
  default: '100',
  help: 'Tuples per request (at most 100)',
};

/** Tuples from `--file` or from the three positionals (exactly one of the two). */
async function tuplesFrom(args: Args, allowCondition: boolean): Promise<TupleKey[]> {
  const file = args.string('file');
  const [user, relation, object] = [args.arg('user'), args.arg('relation'), args.arg('object')];
  if (file !== undefined) {
    if (user !== undefined) throw new UsageError('give either --file or <user> <relation> <object>, not both');
    if (args.has('expires-at'))
      throw new UsageError("--expires-at is for one tuple; a file gives each its 'expires_at'");
    return readTupleFile(file);
  }
  if (user === undefined || relation === undefined || object === undefined) {
    throw new UsageError(
      `missing argument <${user === undefined ? 'user' : relation === undefined ? 'relation' : 'object'}> (or use --file)`,
    );
  }
  const expiresAt = allowCondition ? args.string('expires-at') : undefined;
  if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt)))
    throw new UsageError(`--expires-at must be an RFC 3339 timestamp, got '${expiresAt}'`);
  const expiry = expiresAt !== undefined ? { expires_at: expiresAt } : {};
  const name = allowCondition ? args.string('condition-name') : undefined;
  const rawContext = allowCondition ? args.string('condition-context') : undefined;
  if (rawContext !== undefined && name === undefined)
    throw new UsageError('--condition-context needs --condition-name');
  if (name === undefined) return [{ user, relation, object, ...expiry }];
  let context: unknown = {};
  if (rawContext !== undefined) {
    try {
      context = JSON.parse(rawContext);
    } catch {
      throw new UsageError('--condition-context must be a JSON object');
    }
    if (!isObject(context)) throw new UsageError('--condition-context must be a JSON object');
  }
  return [{ user, relation, object, condition: { name, context: context as JsonObject }, ...expiry }];
}

const FILTER_KEYS = ['object_type', 'object', 'relation', 'user'] as const;
type FilterKey = (typeof FILTER_KEYS)[number];

const FILTER_FLAGS: FlagSpec[] = [
  {
    name: 'filter',
    kind: 'list',
    value: '<key=value,…>',
    help: 'Delete every tuple matching: object_type, object, relation, user (repeatable)',
  },
  { name: 'dry-run', kind: 'boolean', help: 'With --filter: print the first tuples that would go, delete nothing' },
  {
    name: 'limit',
    kind: 'integer',
    min: 1,
    value: '<n>',
    default: '10000',
    help: 'With --filter: tuples per request (at most 10000)',
  },
];

/** `--filter object_type=doc,relation=viewer` (commas split only before a known key). */
function parseFilter(values: readonly string[]): DeleteTuplesBody['filter'] {
  const filter: Partial<Record<FilterKey, string>> = {};
  for (const value of values) {
    for (const part of value.split(/,(?=(?:object_type|object|relation|user)=)/)) {
      const eq = part.indexOf('=');
      const key = part.slice(0, eq) as FilterKey;
      if (eq <= 0 || !FILTER_KEYS.includes(key))
        throw new UsageError(`--filter takes key=value with key one of ${FILTER_KEYS.join(', ')}; got '${part}'`);
      filter[key] = part.slice(eq + 1);
    }
  }
  if (Object.keys(filter).length === 0)
    throw new UsageError('--filter needs at least one of object_type, object, relation, user');
  return filter;
}

/** Deletes by filter, one bounded request after another, until the server says none is left. */
async function deleteByFilter(args: Args, storeId: string): Promise<Record<string, unknown>> {
  if (args.string('file') !== undefined || args.arg('user') !== undefined)
    throw new UsageError('give either --filter or tuples, not both');
  const filter = parseFilter(args.list('filter'));
  const limit = args.int('limit') ?? 10_000;
  const client = clientFrom(args);
  if (args.bool('dry-run')) {
    const r = await client.deleteTuples(storeId, { filter, dry_run: true, limit });
    return { would_delete: r.tuple_keys, more: r.more };
  }
  let deleted = 0;
  let requests = 0;
  for (;;) {
    const r = await client.deleteTuples(storeId, { filter, limit });
    deleted += r.tuple_keys.length;
    requests++;
    if (!r.more) return { deleted, requests };
  }
}

const PRECONDITION_FLAG: FlagSpec = {
  name: 'precondition',
  kind: 'list',
  value: "'<check|not-check|exists|absent> <user> <relation> <object>'",
  help: 'Write only if this holds, checked atomically with the write (repeatable; or a JSON precondition)',
};

/**
 * `--precondition 'check user:anne can_share document:1'` → the wire precondition: `check` (expect
 * true), `not-check` (expect false), `exists`, `absent`; a value starting with `{` is sent as is.
 */
function parsePrecondition(text: string): Record<string, unknown> {
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new UsageError(`--precondition: not valid JSON: ${text}`);
    }
  }
  const [kind, user, relation, object, ...rest] = text.trim().split(/\s+/);
  if (!kind || !user || !relation || !object || rest.length > 0)
    throw new UsageError(
      `--precondition takes '<check|not-check|exists|absent> <user> <relation> <object>'; got '${text}'`,
    );
  const key = { user, relation, object };
  switch (kind) {
    case 'check':
    case 'not-check':
      return { check: { tuple_key: key }, expect: kind === 'check' };
    case 'exists':
      return { tuple_exists: key };
    case 'absent':
      return { tuple_absent: key };
    default:
      throw new UsageError(`--precondition: unknown kind '${kind}' (check, not-check, exists, absent)`);
  }
}

function writer(path: string, summary: string, remove: boolean): Command {
  const conditionFlags: FlagSpec[] = remove
    ? []
    : [
        { name: 'condition-name', kind: 'string', value: '<name>', help: 'Condition of the tuple' },
        { name: 'condition-context', kind: 'string', value: '<json>', help: 'Condition context as a JSON object' },
        {
          name: 'expires-at',
          kind: 'string',
          value: '<rfc3339>',
          help: 'The tuple stops granting at this instant and is removed after it (docs/cli.md)',
        },
      ];
  return {
    spec: {
      path,
      summary,
      positionals: TUPLE_ARGS,
      flags: [
        STORE_FLAG,
        MODEL_FLAG,
        FILE,
        ...conditionFlags,
        {
          name: remove ? 'ignore-missing' : 'ignore-duplicates',
          kind: 'boolean',
          help: remove ? 'Skip tuples that do not exist' : 'Skip tuples that already exist',
        },
        CHUNK,
        PRECONDITION_FLAG,
        ...(remove ? FILTER_FLAGS : []),
        ...SERVER_FLAGS,
      ],
      examples: remove
        ? [
            'latch tuple delete --store-id 01J… user:anne viewer document:roadmap',
            'latch tuple delete --store-id 01J… --file old.csv',
            'latch tuple delete --store-id 01J… --filter object_type=document,relation=viewer',
          ]
        : [
            'latch tuple write --store-id 01J… user:anne viewer document:roadmap',
            'latch tuple write --store-id 01J… --file tuples.yaml',
            'latch tuple write --store-id 01J… user:guest viewer document:roadmap --expires-at 2027-01-01T00:00:00Z',
            "latch tuple write --store-id 01J… user:bob viewer document:roadmap --precondition 'check user:anne can_share document:roadmap'",
          ],
    },
    async run(args, io) {
      const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
      if (remove && args.has('filter')) {
        printJson(io, await deleteByFilter(args, storeId));
        return 0;
      }
      const tuples = await tuplesFrom(args, !remove);
      const client = clientFrom(args);
      const bar = new ProgressBar(io, remove ? 'deleting' : 'writing');
      const done = await writeInChunks(client, storeId, tuples, {
        modelId: args.string('model-id'),
        delete: remove,
        ignore: args.bool(remove ? 'ignore-missing' : 'ignore-duplicates'),
        chunkSize: args.int('chunk-size'),
        onProgress: (d, t) => bar.update(d, t),
        preconditions: args.list('precondition').map(parsePrecondition),
      });
      printJson(io, writeReport(io, remove ? 'deleted' : 'written', done));
      return 0;
    },
  };
}

const read: Command = {
  spec: {
    path: 'tuple read',
    summary: 'Read stored tuples (every page), optionally filtered',
    positionals: [],
    flags: [
      STORE_FLAG,
      { name: 'user', kind: 'string', value: '<user>', help: 'Filter by user' },
      { name: 'relation', kind: 'string', value: '<relation>', help: 'Filter by relation' },
      { name: 'object', kind: 'string', value: '<object>', help: 'Filter by object (type:id or type:)' },
      {
        name: 'output-format',
        kind: 'string',
        value: '<fmt>',
        choices: ['json', 'yaml', 'csv'],
        default: 'json',
        help: 'Output format (yaml and csv can be re-imported)',
      },
      ...SERVER_FLAGS,
    ],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const filter: { user?: string; relation?: string; object?: string } = {};
    for (const k of ['user', 'relation', 'object'] as const) {
      const v = args.string(k);
      if (v !== undefined) filter[k] = v;
    }
    const tuples = await clientFrom(args).readAll(storeId, Object.keys(filter).length ? filter : undefined);
    const format = args.string('output-format') ?? 'json';
    if (format === 'csv') io.out(toCsv(tuples.map((t) => t.key)));
    else if (format === 'yaml') io.out(toYaml(tuples.map((t) => cleanTuple(t.key))));
    else printJson(io, { tuples });
    return 0;
  },
};

export const tupleCommands: readonly Command[] = [
  writer('tuple write', 'Write tuples (one from arguments, or a file)', false),
  writer('tuple delete', 'Delete tuples (one from arguments, or a file)', true),
  read,
  ...bulkCommands,
];
