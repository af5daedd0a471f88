// Write: the store, the model, every tuple validated against it (limits, duplicates, conditions,
// expiry within the horizon at the injected clock's now), then one storage write through the store
// writer (state/store-writer.ts), applied to the store's index before it is acknowledged. A Write
// with preconditions goes through the writer's guarded write: they are evaluated on the index
// under the store's write lock, and the write applies only if all hold (preconditions.ts).

import type { WriteInput, WriteOutput } from '../contract.js';
import type { TupleWrite } from '../../storage/types.js';
import type { EngineParts } from './parts.js';
import { assertPreconditions, preparePreconditions } from './preconditions.js';
import { assertKnownStore } from './request-steps.js';
import { validateExpiries, validateWrite } from './validate-request.js';

export async function write(e: EngineParts, input: WriteInput): Promise<WriteOutput> {
  // A loaded index means a known store (a deletion drops it); one deleted meanwhile on another
  // node fails in the storage write with the same store_id_not_found.
  await assertKnownStore(e, input.storeId);
  const model = await e.models.resolve(input.storeId, input.modelId);
  validateWrite(model, input.writes, input.deletes, e.config.maxTuplesPerWrite);
  validateExpiries(input.writes, e.clock());
  const tuples: TupleWrite = {
    writes: input.writes,
    deletes: input.deletes,
    onDuplicate: input.onDuplicate,
    onMissing: input.onMissing,
  };
  let result;
  if (input.preconditions && input.preconditions.length > 0) {
    const guards = preparePreconditions(model, input.preconditions);
    const deadline = Date.now() + e.config.checkDeadlineMs;
    result = await e.writer.guardedWrite(input.storeId, tuples, deadline, (index) =>
      assertPreconditions(e, model, index.snapshot(), guards, deadline),
    );
  } else {
    result = await e.writer.write(input.storeId, (commit) =>
      commit((storage) => storage.writeTuples(input.storeId, tuples)),
    );
  }
  return {
    modelId: model.id,
    revision: result.revision,
    written: result.written.length,
    deleted: result.deleted.length,
  };
}
