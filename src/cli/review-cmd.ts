// `latch review`: access reviews from a store's history (docs/audit.md). `--object O` lists every
// user holding each relation of O's type on O, `--user U --type T` every object of type T that U
// holds each relation on, both as of `--at` (a time) and with the revision read.
// `--between T1 T2` compares the answers at the two instants: what was held at T2 and not at T1
// is gained, the reverse lost. Each answer is a past-revision ListUsers / ListObjects, paged to
// completion, with the model that was the store's latest at that instant (or `--model-id`).
// Example: `latch review --store S --object document:contract --at 2026-03-12T10:00Z`.

import { ulidTime } from '../domain/ids.js';
import type { AuthorizationModel } from '../domain/types.js';
import type { ListedUser } from '../engine/contract.js';
import { UsageError, type Args } from './args.js';
import { type CliIo, type Command, MODEL_FLAG, SERVER_FLAGS, STORE_FLAG, clientFrom, printJson } from './common.js';
import type { FgaHttpClient } from './http-client.js';

/** One held relation: `user` has `relation` on `object`. */
interface Access {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
}

/** The answer at one instant: the revision read and the model that answered. */
interface Snapshot {
  readonly at: string;
  readonly revision: number | undefined;
  readonly modelId: string;
  readonly access: Access[];
}

const userText = (u: ListedUser): string =>
  'object' in u
    ? `${u.object.type}:${u.object.id}`
    : 'wildcard' in u
      ? `${u.wildcard.type}:*`
      : `${u.userset.type}:${u.userset.id}#${u.userset.relation}`;

/** `--at` as the API's RFC 3339 text (a missing seconds field is allowed, as in 10:00Z). */
function instant(text: string, flag: string): string {
  const full = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$/.test(text)
    ? text.replace(/(Z|[+-]\d{2}:\d{2})$/, ':00$1')
    : text;
  if (Number.isNaN(Date.parse(full)) || !/(Z|[+-]\d{2}:\d{2})$/.test(full))
    throw new UsageError(`${flag} must be an RFC 3339 time with an offset, e.g. 2026-03-12T10:00:00Z`);
  return full;
}

/** The model that answered at `at`: the greatest model id whose time is at or before it. */
async function modelAt(
  client: FgaHttpClient,
  storeId: string,
  at: string,
  modelId?: string,
): Promise<AuthorizationModel> {
  if (modelId) return client.getModel(storeId, modelId);
  const ms = Date.parse(at);
  let token: string | undefined;
  do {
    const page = await client.listModels(storeId, { pageSize: 50, continuationToken: token });
    const then = page.authorization_models.find((m) => ulidTime(m.id) <= ms);
    if (then) return then;
    token = page.continuation_token || undefined;
  } while (token);
  throw new UsageError(`the store had no model at ${at}`);
}

const relationsOf = (model: AuthorizationModel, type: string): string[] => {
  const def = model.type_definitions.find((t) => t.type === type);
  if (!def) throw new UsageError(`type '${type}' is not in model ${model.id}`);
  return Object.keys(def.relations ?? {}).sort();
};

/**
 * The ListUsers filters that cover every subject: each type (its objects and wildcard), and each
 * userset a restriction names (`group#member`): no other userset can be listed as a user.
 */
function userFilters(model: AuthorizationModel): { type: string; relation?: string }[] {
  const usersets = new Map<string, { type: string; relation: string }>();
  for (const t of model.type_definitions)
    for (const m of Object.values(t.metadata?.relations ?? {}))
      for (const r of m.directly_related_user_types ?? [])
        if (r.relation) usersets.set(`${r.type}#${r.relation}`, { type: r.type, relation: r.relation });
  return [...model.type_definitions.map((t) => ({ type: t.type })), ...usersets.values()];
}

interface Question {
  readonly storeId: string;
  readonly object?: string | undefined;
  readonly user?: string | undefined;
  readonly type?: string | undefined;
  readonly modelId?: string | undefined;
}

/** Every (object, relation, user) the question covers, as of `at`. */
async function snapshot(client: FgaHttpClient, q: Question, at: string): Promise<Snapshot> {
  const model = await modelAt(client, q.storeId, at, q.modelId);
  let revision: number | undefined;
  const seen = (r: number): void => void (revision = r);
  const base = { authorization_model_id: model.id, at_time: at };
  const access: Access[] = [];
  if (q.object !== undefined) {
    const [type = '', id = ''] = q.object.split(':');
    const filters = userFilters(model);
    for (const relation of relationsOf(model, type)) {
      const users = new Set<string>();
      for (const filter of filters) {
        const body = { ...base, object: { type, id }, relation, user_filters: [filter] };
        for (const u of await client.listAllUsers(q.storeId, body, 1000, seen)) users.add(userText(u));
      }
      for (const user of [...users].sort()) access.push({ object: q.object, relation, user });
    }
  } else {
    const user = q.user as string;
    const type = q.type as string;
    for (const relation of relationsOf(model, type)) {
      const objects = await client.listAllObjects(q.storeId, { ...base, type, relation, user }, 1000, seen);
      for (const object of [...new Set(objects)].sort()) access.push({ object, relation, user });
    }
  }
  return { at, revision, modelId: model.id, access };
}

const key = (a: Access): string => `${a.object}\u0000${a.relation}\u0000${a.user}`;

/** Rows held at `to` and not at `from` (gained), and the reverse (lost). */
function compare(from: readonly Access[], to: readonly Access[]): { gained: Access[]; lost: Access[] } {
  const before = new Set(from.map(key));
  const after = new Set(to.map(key));
  return { gained: to.filter((a) => !before.has(key(a))), lost: from.filter((a) => !after.has(key(a))) };
}

const csvField = (v: string | number | undefined): string => {
  const s = v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};
const csv = (rows: readonly (string | number | undefined)[][]): string =>
  rows.map((r) => r.map(csvField).join(',')).join('\n') + '\n';

function question(args: Args): Question {
  const storeId = args.string('store') ?? args.require('store-id', 'or --store, or set LATCH_STORE_ID');
  const object = args.string('object');
  const user = args.string('user');
  const type = args.string('type');
  if ((object === undefined) === (user === undefined)) throw new UsageError('give either --object or --user');
  if (object !== undefined && !/^[^:#\s]+:[^#\s]+$/.test(object)) throw new UsageError('--object must be <type>:<id>');
  if (user !== undefined && type === undefined)
    throw new UsageError('--user needs --type (the type of objects to review)');
  return { storeId, object, user, type, modelId: args.string('model-id') };
}

function print(io: CliIo, format: string, q: Question, at: Snapshot): void {
  if (format === 'json')
    return printJson(io, {
      store_id: q.storeId,
      at: at.at,
      revision: at.revision ?? null,
      authorization_model_id: at.modelId,
      access: at.access,
    });
  io.out(
    csv([
      ['revision', 'object', 'relation', 'user'],
      ...at.access.map((a) => [at.revision, a.object, a.relation, a.user]),
    ]),
  );
}

function printChange(io: CliIo, format: string, q: Question, from: Snapshot, to: Snapshot): void {
  const { gained, lost } = compare(from.access, to.access);
  const end = (s: Snapshot) => ({ at: s.at, revision: s.revision ?? null, authorization_model_id: s.modelId });
  if (format === 'json') return printJson(io, { store_id: q.storeId, from: end(from), to: end(to), gained, lost });
  const rows = [...gained.map((a) => ['gained', a] as const), ...lost.map((a) => ['lost', a] as const)];
  io.out(
    csv([
      ['change', 'from_revision', 'to_revision', 'object', 'relation', 'user'],
      ...rows.map(([change, a]) => [change, from.revision, to.revision, a.object, a.relation, a.user]),
    ]),
  );
}

const review: Command = {
  spec: {
    path: 'review',
    summary: 'Access review: who held what on an object, or what a user could reach, at a time or between two',
    positionals: [{ name: 'until', help: 'With --between: the end of the interval', optional: true }],
    flags: [
      { name: 'store', kind: 'string', value: '<id>', help: 'Store id (as --store-id)' },
      STORE_FLAG,
      { name: 'object', kind: 'string', value: '<type:id>', help: 'Every user holding each relation on this object' },
      {
        name: 'user',
        kind: 'string',
        value: '<user>',
        help: 'Every object of --type this user holds each relation on',
      },
      { name: 'type', kind: 'string', value: '<type>', help: 'With --user: the type of objects to review' },
      { name: 'at', kind: 'string', value: '<rfc3339>', help: 'The instant to review' },
      {
        name: 'between',
        kind: 'string',
        value: '<rfc3339> <rfc3339>',
        help: 'Who gained and who lost access from the first instant to the second',
      },
      { name: 'format', kind: 'string', value: '<fmt>', choices: ['csv', 'json'], help: 'Output format (default csv)' },
      MODEL_FLAG,
      ...SERVER_FLAGS,
    ],
    examples: [
      'latch review --store 01J… --object document:contract --at 2026-03-12T10:00Z',
      'latch review --store 01J… --user user:bob --type document --format json',
      'latch review --store 01J… --object document:contract --between 2026-03-01T00:00Z 2026-04-01T00:00Z',
    ],
  },
  async run(args, io) {
    const q = question(args);
    const format = args.string('format') ?? 'csv';
    const client = clientFrom(args);
    const between = args.string('between');
    if (between !== undefined) {
      const until = args.arg('until');
      if (until === undefined || args.string('at') !== undefined)
        throw new UsageError('--between takes two instants (and no --at): --between <from> <to>');
      const [t1, t2] = [instant(between, '--between'), instant(until, '--between')];
      if (Date.parse(t1) > Date.parse(t2)) throw new UsageError('--between: the first instant is after the second');
      printChange(io, format, q, await snapshot(client, q, t1), await snapshot(client, q, t2));
      return 0;
    }
    if (args.arg('until') !== undefined) throw new UsageError(`unexpected argument '${args.arg('until') ?? ''}'`);
    // Required: "now" read on this machine's clock could lie ahead of the server's (refused).
    const at = args.require('at', 'or --between <from> <to>');
    print(io, format, q, await snapshot(client, q, instant(at, '--at')));
    return 0;
  },
};

export const reviewCommand = review;
