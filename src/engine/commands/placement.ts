// Holding and releasing single stores, for placement across nodes (`latch serve --placement`):
// the node loads only the stores it owns, and drops one once its new owners serve it.

import { AppError } from '../../errors.js';
import type { HeldStore } from '../contract.js';
import type { EngineParts } from './parts.js';

/** Loads the store's index, then its permission indexes (their failure is logged, not thrown). */
export async function holdStore(e: EngineParts, storeId: string): Promise<void> {
  await e.indexes.get(storeId);
  await e.permissionIndexes.loadStore(storeId).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'store_id_not_found') throw err;
  });
}

/** Drops the store's permission indexes and index; a query that comes later loads it again. */
export function releaseStore(e: EngineParts, storeId: string): void {
  e.permissionIndexes.dropStore(storeId);
  e.listings.dropStore(storeId);
  e.userLists.dropStore(storeId);
  e.pastViews.forgetStore(storeId);
  e.feed.releaseStore(storeId);
}

/** The loaded stores: tuples (base plus overlay) and bytes of base each. */
export function heldStores(e: EngineParts): HeldStore[] {
  const out: HeldStore[] = [];
  for (const [storeId, index] of e.indexes.entries()) {
    const s = index.snapshot();
    out.push({
      storeId,
      tuples: s.base.layout.entries + s.overlay.addCount - s.overlay.delCount,
      bytes: index.baseBytes,
    });
  }
  return out;
}
