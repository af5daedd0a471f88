// Bulk import and export of tuples (docs/operations.md, "Bulk loading").
//
// Import: one chunk per call. Every tuple is validated against the model exactly as Write
// validates it (same codes), in slices with a turn of the event loop between them; the first bad one rejects the whole chunk, its 0-based position in
// the error's `tuple_index` field and its message. The chunk then commits through the one store
// writer (state/store-writer.ts) as `Storage.importTuples`: one atomic batch, one revision, one
// changelog write per new tuple, applied to the store's index in one step before the call
// resolves. Tuples already stored identically are skipped, so a chunk sent again (a client
// resuming after it lost the answer) changes nothing.
//
// Export: `Storage.scanTuples` (one snapshot, one revision) in batches of EXPORT_BATCH tuples.

import { nextTurn } from '../../domain/turn.js';
import { TupleIdentitySet, tupleString } from '../../domain/tuple.js';
import type { TupleKey } from '../../domain/types.js';
import { AppError } from '../../errors.js';
import { BulkTupleValidator } from '../../model/tuple-validation.js';
import type { HeldHint } from '../../storage/types.js';
import type { CompiledModel } from '../../model/types.js';
import {
  MAX_IMPORT_CHUNK,
  type ExportBatch,
  type ExportTuplesInput,
  type ImportTuplesInput,
  type ImportTuplesOutput,
} from '../contract.js';
import type { EngineParts } from './parts.js';
import { assertKnownStore, storeOf } from './request-steps.js';
import { validateExpiries } from './validate-request.js';

/** Tuples per exported batch: one async step of the stream per batch, not per tuple. */
export const EXPORT_BATCH = 1024;

export async function importTuples(e: EngineParts, input: ImportTuplesInput): Promise<ImportTuplesOutput> {
  await assertKnownStore(e, input.storeId);
  const model = await e.models.resolve(input.storeId, input.modelId);
  // Validation yields to the planning of chunks already validated (StoreWriter.importLane): that
  // planning is on the store's write path, this chunk's validation is not yet.
  const lane = e.writer.importLane;
  await validateImport(model, input.tuples, e.clock(), lane.turn);
  const result = await e.writer.write(input.storeId, (commit) =>
    commit((storage) => storage.importTuples(input.storeId, input.tuples, heldHint(e, input.storeId), lane)),
  );
  return { modelId: model.id, revision: result.revision, written: result.written.length };
}

/**
 * The store's index as a hint to the storage (HeldHint): in the store's write order every earlier
 * write of this node is applied to it, so it holds what the storage holds at its revision (the
 * storage takes the hint only at that revision). None when the index is not loaded.
 */
function heldHint(e: EngineParts, storeId: string): HeldHint | undefined {
  const index = e.indexes.peek(storeId);
  return index && { revision: index.currentRevision, mayHold: (t) => index.mayHold(t) };
}

/** The error of the tuple at `index`: its code, its message prefixed with its position, `tuple_index`. */
function at(index: number, err: AppError): AppError {
  return new AppError(err.code, `tuple_keys[${index}]: ${err.message}`, { fields: { tuple_index: index } });
}

/** Tuples validated between two turns of the event loop, so Checks are answered during an import. */
export const VALIDATION_SLICE = 2048;

/**
 * Write's rules for one chunk of writes: 1 … MAX_IMPORT_CHUNK tuples, no tuple twice
 * (cannot_allow_duplicate_tuples_in_one_request), each valid against the model
 * (validation_error) with an expiry in the future and within the horizon. The model lookups are
 * made once per tuple shape (BulkTupleValidator), and the chunk is validated in slices of
 * VALIDATION_SLICE tuples, with `turn` (a turn of the event loop by default) before each slice
 * but the first.
 */
export async function validateImport(
  model: CompiledModel,
  tuples: readonly TupleKey[],
  now: number,
  turn: () => Promise<void> = nextTurn,
): Promise<void> {
  if (tuples.length === 0)
    throw new AppError('invalid_write_input', 'Invalid input. Make sure you provide at least one tuple to import');
  if (tuples.length > MAX_IMPORT_CHUNK)
    throw new AppError(
      'exceeded_entity_limit',
      `The number of tuples in one import chunk exceeds the allowed limit of ${MAX_IMPORT_CHUNK}`,
    );
  const seen = new TupleIdentitySet(tuples.length);
  const validator = new BulkTupleValidator(model);
  for (let i = 0; i < tuples.length; i++) {
    if (i > 0 && i % VALIDATION_SLICE === 0) await turn();
    const t = tuples[i] as TupleKey;
    if (!seen.add(t))
      throw at(
        i,
        new AppError(
          'cannot_allow_duplicate_tuples_in_one_request',
          `duplicate tuple in import chunk: ${tupleString(t)}`,
        ),
      );
    const fault = validator.problem(t);
    if (fault) throw at(i, new AppError('validation_error', fault.message));
    if (t.expires_at !== undefined) {
      try {
        validateExpiries([t], now);
      } catch (err) {
        throw err instanceof AppError ? at(i, err) : err;
      }
    }
  }
}

export async function* exportTuples(
  e: EngineParts,
  input: ExportTuplesInput,
  signal?: AbortSignal,
): AsyncGenerator<ExportBatch> {
  await storeOf(e, input.storeId);
  const { revision, tuples } = await e.storage.scanTuples(input.storeId);
  let batch: TupleKey[] = [];
  const it = tuples[Symbol.asyncIterator]();
  try {
    for (let r = await it.next(); !r.done; r = await it.next()) {
      batch.push(r.value);
      if (batch.length === EXPORT_BATCH) {
        if (signal?.aborted) return;
        yield { revision, tuples: batch };
        batch = [];
      }
    }
    if (batch.length > 0 && !signal?.aborted) yield { revision, tuples: batch };
  } finally {
    await it.return?.();
  }
}
