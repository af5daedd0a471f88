// Read: the store, then a page of its stored tuples matching the filter, straight from the
// datastore (fresh by nature: the consistency preference has nothing to choose).

import type { Page, Tuple } from '../../domain/types.js';
import type { ReadInput } from '../contract.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function read(e: EngineParts, input: ReadInput): Promise<Page<Tuple>> {
  await storeOf(e, input.storeId);
  return e.storage.readTuples(input.storeId, input.filter, input);
}
