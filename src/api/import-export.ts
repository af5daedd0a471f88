// Bulk import and export of tuples (latch extensions; docs/reference/http-api.md, "Bulk import and
// export"): `POST /stores/{id}/tuples/import` takes one chunk of at most MAX_IMPORT_CHUNK tuple
// keys as NDJSON (one TupleKey per line, `Content-Type: application/x-ndjson`), JSON
// `{"tuple_keys": [...]}` or the same in msgpack; `GET /stores/{id}/tuples/export` streams every
// tuple of the store at one revision as `{"result": TupleKey}` lines.

import type { TupleKey } from '../domain/types.js';
import { AppError } from '../errors.js';
import {
  MAX_IMPORT_CHUNK,
  type ExportBatch,
  type ExportTuplesInput,
  type ImportTuplesInput,
} from '../engine/contract.js';
import { endpoint, type Endpoint } from './endpoint.js';
import { importedTupleKey } from './tuple-key-parsers.js';
import { isObj, list, modelId, modelIdValue, storeId } from './validate.js';

/** The import route's body limit: MAX_IMPORT_CHUNK tuples of ≈ 600 bytes each, with room for conditions. */
export const IMPORT_BODY_LIMIT = 32 * 1024 * 1024;

/** The header naming the model of an NDJSON import (a JSON or msgpack body says `authorization_model_id`). */
export const IMPORT_MODEL_HEADER = 'latch-authorization-model-id';

/** A shape error of the tuple at `index`, with its position (the same `tuple_index` as the engine's errors). */
function at(index: number, err: unknown): unknown {
  if (!(err instanceof AppError)) return err;
  return new AppError(err.code, `tuple_keys[${index}]: ${err.message}`, { fields: { tuple_index: index } });
}

const importTuples = endpoint<ImportTuplesInput>({
  name: 'ImportTuples',
  op: 'import-tuples',
  method: 'post',
  path: '/stores/:store_id/tuples/import',
  bodyLimit: IMPORT_BODY_LIMIT,
  ndjson: true,
  headers: [IMPORT_MODEL_HEADER],
  parse(req) {
    const store = storeId(req.params.store_id, 'ImportTuplesRequest');
    let items: unknown[];
    let model: string | undefined;
    if (Array.isArray(req.body)) {
      items = req.body;
      model = modelIdValue(req.headers?.[IMPORT_MODEL_HEADER] ?? '', 'ImportTuplesRequest');
    } else if (isObj(req.body)) {
      items = list(req.body, 'tuple_keys');
      model = modelId(req.body, 'ImportTuplesRequest');
    } else throw new AppError('validation_error', 'an import body is NDJSON tuple keys or {"tuple_keys": [...]}');
    if (items.length > MAX_IMPORT_CHUNK)
      throw new AppError(
        'exceeded_entity_limit',
        `The number of tuples in one import chunk exceeds the allowed limit of ${MAX_IMPORT_CHUNK}`,
      );
    // Each item is replaced by its TupleKey in place: the decoded body is ours, and the chunk's
    // tuples need no second array.
    for (let i = 0; i < items.length; i++) {
      try {
        items[i] = importedTupleKey(items[i]);
      } catch (err) {
        throw at(i, err);
      }
    }
    return { storeId: store, modelId: model, tuples: items as TupleKey[] };
  },
  async handle(input, ctx) {
    const out = await ctx.latch.importTuples(input);
    ctx.modelId = out.modelId;
    ctx.revision = out.revision;
    return { status: 200, body: { written: out.written, revision: out.revision } };
  },
});

/** Each batch's tuples as JSON lines, handed to the transport a batch per async step. */
async function* lines(batches: AsyncIterable<ExportBatch>): AsyncGenerator<readonly string[]> {
  for await (const b of batches) {
    const out = new Array<string>(b.tuples.length);
    for (let i = 0; i < b.tuples.length; i++) out[i] = JSON.stringify(b.tuples[i]);
    yield out;
  }
}

const exportTuples = endpoint<ExportTuplesInput>({
  name: 'ExportTuples',
  op: 'export-tuples',
  method: 'get',
  path: '/stores/:store_id/tuples/export',
  streaming: true,
  parse: (req) => ({ storeId: storeId(req.params.store_id, 'ExportTuplesRequest') }),
  async handle(input, ctx) {
    return { stream: lines(ctx.latch.exportTuples(input, ctx.signal)), batched: true, live: true };
  },
});

export const IMPORT_EXPORT_ENDPOINTS: readonly Endpoint[] = [importTuples, exportTuples];
