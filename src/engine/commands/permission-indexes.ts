// Permission indexes (docs/permission-indexes.md): create, list, get and delete a store's
// indexes, wait until they have caught up with this node's writes, and ReadExpansions (the
// current set, then live events), each after the store is known to exist. The indexes themselves
// live in ../permission-index/.

import { AppError } from '../../errors.js';
import type { CreatePermissionIndex, ExpansionsInput, ExpansionStreamEvent, PermissionIndexInfo } from '../contract.js';
import type { PermissionIndex } from '../permission-index/permission-index.js';
import { expansionStream } from '../permission-index/stream.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function createPermissionIndex(
  e: EngineParts,
  input: CreatePermissionIndex,
): Promise<PermissionIndexInfo> {
  await storeOf(e, input.storeId);
  return describe(await e.permissionIndexes.create(input));
}

export async function listPermissionIndexes(e: EngineParts, storeId: string): Promise<PermissionIndexInfo[]> {
  await storeOf(e, storeId);
  return (await e.permissionIndexes.list(storeId)).map(describe);
}

export async function getPermissionIndex(
  e: EngineParts,
  storeId: string,
  indexId: string,
): Promise<PermissionIndexInfo> {
  await storeOf(e, storeId);
  return describe(await e.permissionIndexes.get(storeId, indexId));
}

export async function deletePermissionIndex(e: EngineParts, storeId: string, indexId: string): Promise<void> {
  await storeOf(e, storeId);
  await e.permissionIndexes.delete(storeId, indexId);
}

/** Every index of the store has maintained the revisions this node had applied at the call. */
export function permissionIndexesCaughtUp(e: EngineParts, storeId: string): Promise<void> {
  return e.permissionIndexes.caughtUp(storeId);
}

/**
 * ReadExpansions: the index's stream (../permission-index/stream.ts) once the store, the index and
 * `from` are checked, which the first `next()` does (its rejection is the stream's first error).
 * The checked stream is handed out as is, not re-yielded by a generator of this one: each event
 * would cost another async-generator step (a promise and a microtask) on every stream.
 */
export function expansions(
  e: EngineParts,
  input: ExpansionsInput,
  signal?: AbortSignal,
): AsyncIterable<ExpansionStreamEvent> {
  const open = async (): Promise<AsyncGenerator<ExpansionStreamEvent>> => {
    await storeOf(e, input.storeId);
    const pi = await e.permissionIndexes.get(input.storeId, input.indexId);
    // A cursor past the store's last commit names no event yet: resuming from it would silently
    // skip every event up to that revision. (Past the index's own revision is fine: it lags.)
    if (input.from && input.from.revision > (await e.storage.revision(input.storeId))) {
      throw new AppError(
        'revision_in_future',
        `invalid from: revision ${input.from.revision} is after the store's revision`,
      );
    }
    return expansionStream(pi, input, () => e.permissionIndexes.stillDefined(input.storeId, input.indexId), signal);
  };
  return {
    [Symbol.asyncIterator](): AsyncIterator<ExpansionStreamEvent> {
      let opened: Promise<AsyncGenerator<ExpansionStreamEvent>> | undefined;
      let stream: AsyncGenerator<ExpansionStreamEvent> | undefined;
      let failed = false;
      return {
        next: () => {
          if (stream) return stream.next();
          // After a failed open the stream is over, as a generator's is after it threw.
          if (failed) return Promise.resolve({ done: true, value: undefined });
          opened ??= open();
          return opened.then(
            (s) => (stream = s).next(),
            (err: unknown) => {
              failed = true;
              throw err;
            },
          );
        },
        return: async (): Promise<IteratorResult<ExpansionStreamEvent>> => {
          // Ends the stream if it was opened (its finally blocks run); a failed open has nothing to end.
          const s = stream ?? (opened ? await opened.catch(() => undefined) : undefined);
          if (s) await s.return(undefined);
          return { done: true, value: undefined };
        },
      };
    },
  };
}

function describe(pi: PermissionIndex): PermissionIndexInfo {
  return {
    record: pi.record,
    status: pi.status,
    reason: pi.reason,
    revision: pi.revision,
    freshness: pi.freshness,
    updatedAt: pi.updatedAt,
    expansions: pi.triples,
    ingestedChanges: pi.ingestedChanges,
    events: pi.eventsCount,
  };
}
