// The compiled-model cache (src/engine/state/model-cache.ts) is keyed by model id: a model is only ever
// served to the store that holds it, whichever store compiled it first.
import { expect, test } from 'vitest';
import { ModelCache } from '../../src/engine/state/model-cache.js';
import { openStorage } from '../../src/storage/index.js';
import type { AuthorizationModelInput } from '../../src/domain/types.js';

const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
    },
  ],
} as unknown as AuthorizationModelInput;

test('a model id is a miss in another store, before and after it was compiled; forgetting a store drops only its models', async () => {
  const storage = await openStorage({});
  const [a, b] = [await storage.createStore('a'), await storage.createStore('b')];
  const idA = (await storage.writeModel(a.id, MODEL)).id;
  const idB = (await storage.writeModel(b.id, MODEL)).id;
  const models = new ModelCache(storage);
  await expect(models.resolve(b.id, idA)).rejects.toMatchObject({ code: 'authorization_model_not_found' });
  expect((await models.resolve(a.id, idA)).id).toBe(idA); // compiled and cached now
  expect(models.peek(a.id, idA)?.id).toBe(idA);
  expect(models.peek(b.id, idA)).toBeUndefined();
  await expect(models.resolve(b.id, idA)).rejects.toMatchObject({ code: 'authorization_model_not_found' });
  expect((await models.resolve(b.id, idB)).id).toBe(idB);
  models.forgetStore(a.id);
  expect(models.peek(a.id, idA)).toBeUndefined();
  expect(models.peek(b.id, idB)?.id).toBe(idB);
});
