// The model an HTTP thread asks for before it answers a store's Checks itself (`--http-threads`):
// the store's index loaded (which puts it on the threads' board), the model resolved as Check
// resolves it, its walker program compiled against the store's names, and that program kept on
// the board while the store is there (a thread may run it any time).

import { programFor } from '../evaluation/walker/program.js';
import type { ThreadModel } from '../contract.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function threadModel(
  e: EngineParts,
  storeId: string,
  modelId: string | undefined,
): Promise<ThreadModel | undefined> {
  if (!e.board) return undefined;
  if (!e.indexes.has(storeId)) await storeOf(e, storeId);
  const index = await e.indexes.get(storeId);
  const model = await e.models.resolve(storeId, modelId);
  const program = programFor(model, index.dict);
  if (!e.board.keep(storeId, program)) return undefined;
  return {
    modelId: model.id,
    json: model.json,
    program: program.ptr,
    stride: program.stride,
    kinds: [...program.kinds],
    names: index.dict.nameList.slice(),
  };
}
