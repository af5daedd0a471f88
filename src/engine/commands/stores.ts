// Stores: create, get, list and delete. Deleting a store also drops what this node holds for it:
// its index and revision-feed state, its listing-cache entries and its permission indexes.

import type { Page, PageRequest, Store } from '../../domain/types.js';
import { fail } from '../../errors.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export function createStore(e: EngineParts, name: string): Promise<Store> {
  return e.storage.createStore(name);
}

export function getStore(e: EngineParts, storeId: string): Promise<Store> {
  return storeOf(e, storeId);
}

export function listStores(e: EngineParts, query: PageRequest & { name?: string | undefined }): Promise<Page<Store>> {
  return e.storage.listStores(query);
}

export async function deleteStore(e: EngineParts, storeId: string): Promise<void> {
  if (!(await e.storage.deleteStore(storeId))) throw fail.storeNotFound();
  e.feed.dropStore(storeId);
  e.listings.dropStore(storeId);
  e.userLists.dropStore(storeId);
  e.permissionIndexes.dropStore(storeId);
  e.pastViews.forgetStore(storeId);
}
