// ReadChanges: the store, then a page of its changelog from the cursor or start time, optionally
// of one object type, straight from the datastore.

import type { Page, TupleChange } from '../../domain/types.js';
import type { ReadChangesInput } from '../contract.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function readChanges(e: EngineParts, input: ReadChangesInput): Promise<Page<TupleChange>> {
  await storeOf(e, input.storeId);
  return e.storage.readChanges(input.storeId, input);
}
