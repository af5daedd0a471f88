// `latch query check|batch-check|list-objects|list-users|expand|list-relations` against a server.
// Shared options: --model-id, --context (JSON object), --contextual-tuple "user relation object"
// (repeatable), --consistency. Answers are printed as the API's JSON.

import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import type { JsonObject, TupleKey } from '../domain/types.js';
import { type Args, type FlagSpec, UsageError } from './args.js';
import {
  type Command,
  MODEL_FLAG,
  SERVER_FLAGS,
  STORE_FLAG,
  chunks,
  clientFrom,
  printJson,
  splitObject,
} from './common.js';
import { ApiError, type BatchCheckItemResult } from './http-client.js';
import { isObject } from './tuple-file.js';

const QUERY_FLAGS: FlagSpec[] = [
  STORE_FLAG,
  MODEL_FLAG,
  { name: 'context', kind: 'string', value: '<json>', help: 'Condition context as a JSON object' },
  { name: 'contextual-tuple', kind: 'list', value: '"<user> <relation> <object>"', help: 'A contextual tuple' },
  {
    name: 'consistency',
    kind: 'string',
    value: '<pref>',
    choices: ['MINIMIZE_LATENCY', 'HIGHER_CONSISTENCY'],
    help: 'Consistency preference',
  },
  {
    name: 'at-revision',
    kind: 'integer',
    min: 0,
    value: '<n>',
    help: 'Evaluate as of this store revision (docs/audit.md)',
  },
  { name: 'at-time', kind: 'string', value: '<rfc3339>', help: 'Evaluate as of this instant (docs/audit.md)' },
  ...SERVER_FLAGS,
];

function context(args: Args): { context?: JsonObject } {
  const raw = args.string('context');
  if (raw === undefined) return {};
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new UsageError('--context must be a JSON object');
  }
  if (!isObject(v)) throw new UsageError('--context must be a JSON object');
  return { context: v as JsonObject };
}

function contextualTuples(args: Args): TupleKey[] {
  return args.list('contextual-tuple').map((s) => {
    const parts = s.trim().split(/\s+/);
    if (parts.length !== 3) throw new UsageError(`--contextual-tuple must be "<user> <relation> <object>", got '${s}'`);
    const [user, relation, object] = parts as [string, string, string];
    return { user, relation, object };
  });
}

interface Common {
  authorization_model_id?: string;
  at_revision?: number;
  at_time?: string;
  consistency?: string;
  context?: JsonObject;
  contextual_tuples?: { tuple_keys: TupleKey[] };
}

/** Request-level fields: model id, consistency and the past point (at_revision / at_time). */
function requestFields(args: Args): Pick<Common, 'authorization_model_id' | 'consistency' | 'at_revision' | 'at_time'> {
  const model = args.string('model-id');
  const consistency = args.string('consistency');
  const atRevision = args.int('at-revision');
  const atTime = args.string('at-time');
  return {
    ...(model ? { authorization_model_id: model } : {}),
    ...(consistency ? { consistency } : {}),
    ...(atRevision !== undefined ? { at_revision: atRevision } : {}),
    ...(atTime ? { at_time: atTime } : {}),
  };
}

/** Per-check fields: context and contextual tuples (in the `{tuple_keys}` wrapper). */
function checkFields(args: Args): Pick<Common, 'context' | 'contextual_tuples'> {
  const ct = contextualTuples(args);
  return { ...context(args), ...(ct.length ? { contextual_tuples: { tuple_keys: ct } } : {}) };
}

/** Every shared field of Check, ListObjects and Expand. */
function common(args: Args): Common {
  return { ...requestFields(args), ...checkFields(args) };
}

function storeOf(args: Args): string {
  return args.require('store-id', 'or set LATCH_STORE_ID');
}

const check: Command = {
  spec: {
    path: 'query check',
    summary: 'Is <user> related to <object> as <relation>?',
    positionals: [
      { name: 'user', help: 'e.g. user:anne' },
      { name: 'relation', help: 'e.g. viewer' },
      { name: 'object', help: 'e.g. document:roadmap' },
    ],
    flags: QUERY_FLAGS,
    examples: ['latch query check --store-id 01J… user:anne viewer document:roadmap --context \'{"ip":"10.0.0.1"}\''],
  },
  async run(args, io) {
    const [user, relation, object] = [args.arg('user'), args.arg('relation'), args.arg('object')] as [
      string,
      string,
      string,
    ];
    const client = clientFrom(args);
    const allowed = await client.check(storeOf(args), { tuple_key: { user, relation, object }, ...common(args) });
    printJson(io, { allowed });
    return 0;
  },
};

/** The item limit a BatchCheck refusal names (`… checks, the maximum allowed is N`), if it is one. */
function batchLimitOf(err: unknown): number | undefined {
  if (!(err instanceof ApiError) || err.status !== 400 || err.code !== 'validation_error') return undefined;
  const m = /batchCheck received \d+ checks, the maximum allowed is (\d+)/.exec(err.message);
  const n = m ? Number(m[1]) : 0;
  return n >= 1 ? n : undefined;
}

const batchCheck: Command = {
  spec: {
    path: 'query batch-check',
    summary: 'Run many checks (from a YAML/JSON file or --check), --batch-size per request',
    positionals: [],
    flags: [
      {
        name: 'file',
        kind: 'string',
        value: '<file>',
        help: 'List of {user, relation, object, context?, correlation_id?}',
      },
      { name: 'check', kind: 'list', value: '"<user> <relation> <object>"', help: 'One check' },
      {
        name: 'batch-size',
        kind: 'integer',
        min: 1,
        value: '<n>',
        default: '50',
        help: "Checks per request; lowered to the server's limit when it refuses more",
      },
      ...QUERY_FLAGS,
    ],
    examples: [
      'latch query batch-check --store-id 01J… --check "user:anne viewer doc:1" --check "user:bob viewer doc:1"',
    ],
  },
  async run(args, io) {
    const items: {
      correlation_id: string;
      tuple_key: { user: string; relation: string; object: string };
      context?: JsonObject;
    }[] = [];
    const file = args.string('file');
    if (file !== undefined) {
      const data: unknown = YAML.parse(await readFile(file, 'utf8'));
      if (!Array.isArray(data)) throw new UsageError(`${file}: expected a list of checks`);
      data.forEach((c, i) => {
        if (
          !isObject(c) ||
          typeof c.user !== 'string' ||
          typeof c.relation !== 'string' ||
          typeof c.object !== 'string'
        ) {
          throw new UsageError(`${file}[${i}]: expected {user, relation, object}`);
        }
        const id = typeof c.correlation_id === 'string' ? c.correlation_id : String(items.length + 1);
        items.push({
          correlation_id: id,
          tuple_key: { user: c.user, relation: c.relation, object: c.object },
          ...(isObject(c.context) ? { context: c.context as JsonObject } : {}),
        });
      });
    }
    for (const s of args.list('check')) {
      const parts = s.trim().split(/\s+/);
      if (parts.length !== 3) throw new UsageError(`--check must be "<user> <relation> <object>", got '${s}'`);
      const [user, relation, object] = parts as [string, string, string];
      items.push({ correlation_id: String(items.length + 1), tuple_key: { user, relation, object } });
    }
    if (items.length === 0) throw new UsageError('give --file or at least one --check');
    const shared = checkFields(args);
    const client = clientFrom(args);
    const result: Record<string, BatchCheckItemResult & { request?: unknown }> = {};
    let size = args.int('batch-size') ?? 50;
    for (let at = 0; at < items.length;) {
      const chunk = items.slice(at, at + size);
      const checks = chunk.map((c) => ({ ...shared, ...c }));
      let r: Record<string, BatchCheckItemResult>;
      try {
        r = await client.batchCheck(storeOf(args), { checks, ...requestFields(args) });
      } catch (err) {
        // A server whose --max-batch-check-items is below the chunk refuses it and names its limit
        // (docs/reference/http-api.md §4.15): continue with chunks of that size instead of failing.
        const limit = batchLimitOf(err);
        if (limit === undefined || limit >= chunk.length) throw err;
        size = limit;
        continue;
      }
      for (const c of chunk)
        result[c.correlation_id] = {
          request: c.tuple_key,
          ...(r[c.correlation_id] ?? { error: { message: 'missing from the response' } }),
        };
      at += chunk.length;
    }
    printJson(io, { result });
    return 0;
  },
};

/** `--all`: page through the complete answer (latch's paged listings) instead of the server's capped one. */
const ALL_FLAG = {
  name: 'all',
  kind: 'boolean',
  help: "Every result, in order, page after page (not capped at the server's 1,000 or its deadline)",
} as const;

const listObjects: Command = {
  spec: {
    path: 'query list-objects',
    summary: 'Objects of <type> that <user> is related to as <relation>',
    positionals: [
      { name: 'user', help: 'e.g. user:anne' },
      { name: 'relation', help: 'e.g. viewer' },
      { name: 'type', help: 'e.g. document' },
    ],
    flags: [...QUERY_FLAGS, ALL_FLAG],
    examples: ['latch query list-objects user:anne viewer document --all --store-id 01J…'],
  },
  async run(args, io) {
    const [user, relation, type] = [args.arg('user'), args.arg('relation'), args.arg('type')] as [
      string,
      string,
      string,
    ];
    const client = clientFrom(args);
    const body = { user, relation, type, ...common(args) };
    const objects = args.bool('all')
      ? await client.listAllObjects(storeOf(args), body)
      : await client.listObjects(storeOf(args), body);
    printJson(io, { objects });
    return 0;
  },
};

const listUsers: Command = {
  spec: {
    path: 'query list-users',
    summary: 'Users related to --object as --relation, filtered by --user-filter',
    positionals: [],
    flags: [
      { name: 'object', kind: 'string', value: '<type:id>', help: 'Object (required)' },
      { name: 'relation', kind: 'string', value: '<relation>', help: 'Relation (required)' },
      {
        name: 'user-filter',
        kind: 'string',
        value: '<type[#relation]>',
        help: 'User type, or userset type#relation (required)',
      },
      ...QUERY_FLAGS,
      ALL_FLAG,
    ],
    examples: ['latch query list-users --store-id 01J… --object document:roadmap --relation viewer --user-filter user'],
  },
  async run(args, io) {
    const object = splitObject(args.require('object'), '--object');
    const relation = args.require('relation');
    const [type = '', filterRelation] = args.require('user-filter').split('#');
    const ct = contextualTuples(args);
    const client = clientFrom(args);
    const list = args.bool('all') ? client.listAllUsers.bind(client) : client.listUsers.bind(client);
    const users = await list(storeOf(args), {
      object,
      relation,
      user_filters: [filterRelation ? { type, relation: filterRelation } : { type }],
      ...requestFields(args),
      ...context(args),
      ...(ct.length ? { contextual_tuples: ct } : {}), // ListUsers takes a plain array
    });
    printJson(io, { users });
    return 0;
  },
};

const expand: Command = {
  spec: {
    path: 'query expand',
    summary: 'One level of the userset tree of <relation> on <object>',
    positionals: [
      { name: 'relation', help: 'e.g. viewer' },
      { name: 'object', help: 'e.g. document:roadmap' },
    ],
    flags: QUERY_FLAGS.filter((f) => f.name !== 'context'),
  },
  async run(args, io) {
    const [relation, object] = [args.arg('relation'), args.arg('object')] as [string, string];
    const tree = await clientFrom(args).expand(storeOf(args), { tuple_key: { relation, object }, ...common(args) });
    printJson(io, { tree });
    return 0;
  },
};

const listRelations: Command = {
  spec: {
    path: 'query list-relations',
    summary: "Which relations <user> has on <object> (a batch check over the type's relations)",
    positionals: [
      { name: 'user', help: 'e.g. user:anne' },
      { name: 'object', help: 'e.g. document:roadmap' },
    ],
    flags: [
      {
        name: 'relation',
        kind: 'list',
        value: '<relation>',
        help: 'Only consider these relations (default: all of the type)',
      },
      ...QUERY_FLAGS,
    ],
  },
  async run(args, io) {
    const [user, object] = [args.arg('user'), args.arg('object')] as [string, string];
    const storeId = storeOf(args);
    const client = clientFrom(args);
    const { type } = splitObject(object, '<object>');
    let relations = args.list('relation');
    if (relations.length === 0) {
      const modelId = args.string('model-id');
      const model = modelId ? await client.getModel(storeId, modelId) : await client.latestModel(storeId);
      const def = model?.type_definitions.find((t) => t.type === type);
      if (!def) throw new Error(`type '${type}' is not in the model`);
      relations = Object.keys(def.relations ?? {});
    }
    const shared = checkFields(args);
    const allowed: string[] = [];
    for (const chunk of chunks(relations, 50)) {
      const checks = chunk.map((relation, i) => ({
        correlation_id: String(i),
        tuple_key: { user, relation, object },
        ...shared,
      }));
      const r = await client.batchCheck(storeId, { checks, ...requestFields(args) });
      chunk.forEach((relation, i) => {
        const res = r[String(i)];
        if (res && 'error' in res) throw new Error(`check of '${relation}' failed: ${res.error.message}`);
        if (res?.allowed) allowed.push(relation);
      });
    }
    printJson(io, { relations: allowed });
    return 0;
  },
};

export const queryCommands: readonly Command[] = [check, batchCheck, listObjects, listUsers, expand, listRelations];
