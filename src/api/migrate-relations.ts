// MigrateRelations, a latch extension (docs/changing-models.md, "Migrating data"):
// `POST /stores/{store_id}/migrate-relations` runs one bounded step of a relation migration.
// Example: {"maps":["document#reader=document#viewer"],"mode":"copy","candidate":{…model…},"limit":1000}
// → {"matching":1000,"copied":1000,"carried":0,"deleted":0,"rejected":0,"rejected_sample":[],
//    "cursor":"…","done":false,"phase":"copy","revision":57}; the next step sends that cursor.

import type { MigrateInput, RelationMap } from '../engine/contract.js';
import { AppError } from '../errors.js';
import { endpoint, ok, type Endpoint } from './endpoint.js';
import { modelInput } from './models.js';
import { tupleKeyOut } from './render.js';
import { bodyObject } from './stores.js';
import { P, REASON, int32, isObj, list, modelId, storeId, str, typeError, violation, type Obj } from './validate.js';

const MESSAGE = 'MigrateRelationsRequest';
/** The most tuples (or changes) one step handles, and the default. */
const MAX_MIGRATE_STEP = 1000;
const MODES = new Set(['dry_run', 'copy', 'finish']);

/** `type#from=type#to`: both sides one object type. */
function parseRelationMap(text: string): RelationMap {
  const m = /^([^#=\s]+)#([^#=\s]+)=([^#=\s]+)#([^#=\s]+)$/.exec(text);
  const [, type, from, toType, to] = m ?? [];
  if (!type || !from || !toType || !to)
    throw new AppError('validation_error', `invalid map '${text}': expected type#relation=type#relation`);
  if (type !== toType)
    throw new AppError('validation_error', `invalid map '${text}': both sides must be of one object type`);
  if (!P.type.test(type) || !P.relation.test(from) || !P.relation.test(to))
    throw new AppError('validation_error', `invalid map '${text}': not a type and relation name`);
  return { objectType: type, from, to };
}

function candidateOf(body: Obj): MigrateInput['candidate'] {
  const v = body.candidate;
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw typeError('candidate', 'message', v);
  return modelInput(v);
}

function parseMigrate(store: string | undefined, body: Obj): MigrateInput {
  const id = storeId(store, MESSAGE);
  const maps = list(body, 'maps').map((v) => {
    if (typeof v !== 'string') throw typeError('maps', 'string', v);
    return parseRelationMap(v);
  });
  if (maps.length === 0) throw violation(MESSAGE, 'Maps', REASON.atLeastOne);
  const mode = str(body, 'mode') || 'copy';
  if (!MODES.has(mode)) throw violation(MESSAGE, 'Mode', REASON.enum);
  const limit = int32(body.limit, 'limit') ?? MAX_MIGRATE_STEP;
  if (limit < 1 || limit > MAX_MIGRATE_STEP) throw violation(MESSAGE, 'Limit', REASON.range(1, MAX_MIGRATE_STEP));
  const cursor = str(body, 'cursor') || undefined;
  return {
    storeId: id,
    maps,
    mode: mode as MigrateInput['mode'],
    candidate: candidateOf(body),
    modelId: modelId(body, MESSAGE),
    cursor,
    limit,
  };
}

const migrate = endpoint<MigrateInput>({
  name: 'MigrateRelations',
  op: 'migrate-relations',
  method: 'post',
  path: '/stores/:store_id/migrate-relations',
  parse: (req) => parseMigrate(req.params.store_id, bodyObject(req)),
  async handle(input, ctx) {
    const out = await ctx.latch.migrateRelations(input);
    ctx.revision = out.revision;
    return ok({
      matching: out.matching,
      copied: out.copied,
      carried: out.carried,
      deleted: out.deleted,
      rejected: out.rejected,
      rejected_sample: out.rejectedSample.map(tupleKeyOut),
      cursor: out.cursor,
      done: out.done,
      phase: out.phase,
      revision: out.revision,
    });
  },
});

export const MIGRATE_ENDPOINTS: readonly Endpoint[] = [migrate];
