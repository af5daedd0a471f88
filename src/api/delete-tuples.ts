// Delete by filter, a latch extension (docs/reference/decisions.md D15): `POST /stores/{store_id}/delete-tuples`
// deletes the tuples a filter selects, at most 10,000 per request (1000 unless `limit` says), in
// one atomic write.
// Example: {"filter":{"object_type":"document","relation":"viewer"},"limit":500} →
// {"tuple_keys":[…500 keys…],"more":true,"dry_run":false,"revision":42}.

import { DEFAULT_DELETE_BY_FILTER, MAX_DELETE_BY_FILTER } from '../engine/commands/delete-tuples.js';
import type { DeleteTuplesFilter, DeleteTuplesInput } from '../engine/contract.js';
import { AppError } from '../errors.js';
import { endpoint, ok, type Endpoint } from './endpoint.js';
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

const deleteTuples = endpoint<DeleteTuplesInput>({
  name: 'DeleteTuples',
  op: 'delete-tuples',
  method: 'post',
  path: '/stores/:store_id/delete-tuples',
  parse: (req) => parseDeleteTuples(req.params.store_id, bodyObject(req)),
  async handle(input, ctx) {
    const out = await ctx.latch.deleteTuples(input);
    return ok({
      tuple_keys: out.tuples.map(tupleKeyOut),
      more: out.more,
      dry_run: input.dryRun,
      revision: out.revision,
    });
  },
});

export const DELETE_TUPLES_ENDPOINTS: readonly Endpoint[] = [deleteTuples];
