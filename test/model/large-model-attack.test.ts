// The large-model attack: a model of 2,000 relations held the event loop 13.5 s on its write and
// again on its first Check (validation and the walker's reach sets walked the graph once per
// relation). Now a model holds at most 1,000 relations and 100 operands per rewrite, refused
// with 400 exceeded_entity_limit, and the work is linear: a model at the limit stalls the loop
// about ten times what a 100-relation model costs, measured in the same run.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLatch } from '../../src/latch.js';
import type { Latch } from '../../src/engine/contract.js';
import { validateModel } from '../../src/model/validate.js';
import { MAX_MODEL_RELATIONS, MAX_REWRITE_OPERANDS } from '../../src/model/validate-shape.js';
import { largeModel, topRelation, type LargeShape } from '../fixtures/large-model.js';
import { probeLoop } from '../support/stall.js';
import { appErrorOf } from './helpers.js';

let latch: Latch;
beforeAll(async () => {
  latch = await openLatch({});
});
afterAll(() => latch.close());

/** Write `model` to a new store, then ask its first Check (which compiles it) of `relation`. */
async function writeAndCheck(n: number, shape: LargeShape): Promise<boolean> {
  const store = await latch.createStore(`large-${shape}-${n}`);
  const modelId = await latch.writeModel(store.id, largeModel(n, shape));
  await latch.write({
    storeId: store.id,
    writes: [{ user: 'user:anne', relation: 'r0', object: 'doc:1' }],
    deletes: [],
  } as never);
  const tupleKey = { user: 'user:anne', relation: topRelation(n, shape), object: 'doc:1' };
  return (await latch.check({ storeId: store.id, modelId, tupleKey, contextualTuples: [] } as never)).allowed;
}

/** The busy time of writing and first-checking a 100-relation model `times` times (ms). */
async function baseline(shape: LargeShape, times: number): Promise<number> {
  let ms = 0;
  for (let i = 0; i < times; i++) {
    const probe = probeLoop();
    expect(await writeAndCheck(100, shape)).toBe(true);
    ms += probe.stop().activeMs;
  }
  return ms;
}

describe('large models', () => {
  it('attack: a model of 2,000 relations is refused with exceeded_entity_limit', () => {
    const err = appErrorOf(() => validateModel(largeModel(2000)));
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: 'exceeded_entity_limit' });
    expect(validateModel(largeModel(MAX_MODEL_RELATIONS)).type_definitions).toHaveLength(2);
  });

  it('a rewrite of more than 100 operands is refused with exceeded_entity_limit', () => {
    const model = largeModel(MAX_REWRITE_OPERANDS + 2) as unknown as {
      type_definitions: { relations: Record<string, unknown> }[];
    };
    const doc = model.type_definitions[1] as { relations: Record<string, unknown> };
    const child = Object.keys(doc.relations).map((r) => ({ computedUserset: { relation: r } }));
    doc.relations.all = { union: { child } };
    const err = appErrorOf(() => validateModel(model));
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: 'exceeded_entity_limit' });
  });

  for (const shape of ['chain', 'reverse', 'parent'] as const) {
    it(`attack: a model at the limit (${shape}) is written and first checked in linear time`, async () => {
      await baseline(shape, 1); // every module and the walker are loaded first
      const tenSmall = await baseline(shape, 10);
      const probe = probeLoop();
      expect(await writeAndCheck(MAX_MODEL_RELATIONS, shape)).toBe(true);
      const load = probe.stop();
      // Linear work: about ten 100-relation models. The per-relation walks were quadratic
      // (about a hundred of them) and held the loop for seconds.
      expect(load.maxStallMs).toBeLessThan(4 * tenSmall + 50);
    });
  }
});
