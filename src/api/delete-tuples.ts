// Delete by filter, a latch extension (docs/reference/decisions.md D15): `POST /stores/{store_id}/delete-tuples`
// deletes the tuples a filter selects, at most 10,000 per request (1000 unless `limit` says), in
// one atomic write.
// Example: {"filter":{"object_type":"document","relation":"viewer"},"limit":500} →
// {"tuple_keys":[…500 keys…],"more":true,"dry_run":false,"revision":42}.

import { Buffer } from 'node:buffer';
import type { TupleKey } from '../domain/types.js';
import { DEFAULT_DELETE_BY_FILTER, MAX_DELETE_BY_FILTER } from '../engine/commands/delete-tuples.js';
import type { DeleteTuplesFilter, DeleteTuplesInput, DeleteTuplesOutput } from '../engine/contract.js';
import { AppError } from '../errors.js';
import { endpoint, type Endpoint, type Reply } from './endpoint.js';
import { plain, putPlain } from './plain-json.js';
import { tupleKeyOut } from './render.js';
import { bodyObject } from './stores.js';
import { P, REASON, bool, int32, match, maxBytes, optMessage, storeId, str, violation, type Obj } from './validate.js';

const MESSAGE = 'DeleteTuplesRequest';
const FILTER = 'DeleteTuplesFilter';

/** `type:id` with both parts present (`P.object` alone also admits `document` or `document:`). */
function fullObject(object: string): string {
  const colon = object.indexOf(':');
  if (colon <= 0 || colon === object.length - 1)
    throw violation(FILTER, 'Object', 'value must be an object of the form type:id');
  return object;
}

/** A stored user string: `type:id`, `type:id#relation` or `type:*`. */
function fullUser(user: string): string {
  if (!P.readUser.test(user.split('#')[0] ?? ''))
    throw violation(FILTER, 'User', 'value must be a user of the form type:id, type:id#relation or type:*');
  return user;
}

function filterOf(f: Obj): DeleteTuplesFilter {
  const objectType = match(str(f, 'object_type'), P.type, FILTER, 'ObjectType', true);
  const object = match(str(f, 'object'), P.object, FILTER, 'Object', true);
  const relation = match(str(f, 'relation'), P.relation, FILTER, 'Relation', true);
  const user = match(maxBytes(str(f, 'user'), 512, FILTER, 'User'), P.checkUser, FILTER, 'User', true);
  if (object !== '') fullObject(object);
  if (user !== '') fullUser(user);
  if (objectType !== '' && object !== '' && !object.startsWith(`${objectType}:`)) {
    throw new AppError('validation_error', `the filter's object ${object} is not of its object_type ${objectType}`);
  }
  if (objectType === '' && object === '' && relation === '' && user === '') {
    throw new AppError(
      'validation_error',
      'the filter must set at least one of object_type, object, relation and user',
    );
  }
  return {
    objectType: objectType || undefined,
    object: object || undefined,
    relation: relation || undefined,
    user: user || undefined,
  };
}

/** `limit`: absent → DEFAULT_DELETE_BY_FILTER; else 1 … MAX_DELETE_BY_FILTER. */
function limitOf(body: Obj): number {
  const n = int32(body.limit, 'limit');
  if (n === undefined) return DEFAULT_DELETE_BY_FILTER;
  if (n < 1 || n > MAX_DELETE_BY_FILTER) throw violation(MESSAGE, 'Limit', REASON.range(1, MAX_DELETE_BY_FILTER));
  return n;
}

export function parseDeleteTuples(store: string | undefined, body: Obj): DeleteTuplesInput {
  const id = storeId(store, MESSAGE);
  const f = optMessage(body, 'filter');
  if (!f) throw violation(MESSAGE, 'Filter', REASON.required);
  const filter = filterOf(f);
  const dryRun = bool(body, 'dry_run');
  return { storeId: id, filter, dryRun, limit: limitOf(body) };
}

const KEY_USER = Buffer.from('{"user":"', 'latin1');
const KEY_RELATION = Buffer.from('","relation":"', 'latin1');
const KEY_OBJECT = Buffer.from('","object":"', 'latin1');
const KEY_END = Buffer.from('","condition":null}', 'latin1');
const PER_KEY = KEY_USER.length + KEY_RELATION.length + KEY_OBJECT.length + KEY_END.length + 1;

/** Copies the short constant `src` to `buf` at `at`; returns the end (a loop beats a native call). */
function put(buf: Buffer, at: number, src: Buffer): number {
  for (let i = 0; i < src.length; i++) buf[at + i] = src[i] as number;
  return at + src.length;
}

/**
 * The reply's JSON, byte for byte what `JSON.stringify` makes of `body` (a tuple key as
 * render.ts `tupleKeyOut` shapes it), written straight into one buffer: a request deletes up to
 * 10,000 tuples, and an object and a string per tuple were a large share of its CPU. Undefined
 * when some tuple carries a condition or an expiry or a string that JSON escapes (the caller
 * stringifies the body then).
 */
function replyJson(out: DeleteTuplesOutput, dryRun: boolean): Uint8Array | undefined {
  const tail = `],"more":${out.more},"dry_run":${dryRun},"revision":${out.revision}}`;
  let size = 16 + tail.length;
  for (const t of out.tuples) size += PER_KEY + t.user.length + t.relation.length + t.object.length;
  const buf = Buffer.allocUnsafe(size);
  let at = buf.write('{"tuple_keys":[', 0, 'latin1');
  for (let i = 0; i < out.tuples.length; i++) {
    const t = out.tuples[i] as TupleKey;
    if (t.condition !== undefined || t.expires_at !== undefined) return undefined;
    if (!plain(t.user) || !plain(t.relation) || !plain(t.object)) return undefined;
    if (i > 0) buf[at++] = 0x2c;
    at = put(buf, at, KEY_USER);
    at = putPlain(buf, at, t.user);
    at = put(buf, at, KEY_RELATION);
    at = putPlain(buf, at, t.relation);
    at = put(buf, at, KEY_OBJECT);
    at = putPlain(buf, at, t.object);
    at = put(buf, at, KEY_END);
  }
  at += buf.write(tail, at, 'latin1');
  return buf.subarray(0, at);
}

/**
 * The reply: its JSON rendered at once (replyJson), its body built only when a transport asks
 * for it (the msgpack channel, or JSON with a tuple replyJson does not write).
 */
function reply(out: DeleteTuplesOutput, dryRun: boolean): Reply {
  let body: unknown;
  return {
    status: 200,
    json: replyJson(out, dryRun),
    get body(): unknown {
      body ??= { tuple_keys: out.tuples.map(tupleKeyOut), more: out.more, dry_run: dryRun, revision: out.revision };
      return body;
    },
  };
}

const deleteTuples = endpoint<DeleteTuplesInput>({
  name: 'DeleteTuples',
  op: 'delete-tuples',
  method: 'post',
  path: '/stores/:store_id/delete-tuples',
  parse: (req) => parseDeleteTuples(req.params.store_id, bodyObject(req)),
  async handle(input, ctx) {
    return reply(await ctx.latch.deleteTuples(input), input.dryRun);
  },
});

export const DELETE_TUPLES_ENDPOINTS: readonly Endpoint[] = [deleteTuples];
