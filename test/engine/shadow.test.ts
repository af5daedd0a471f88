// Shadow evaluation on the embedded engine over LevelDB: the setting survives a restart and the
// restarted node evaluates sampled Checks under it (the storage suite holds each backend's side,
// PostgreSQL read through a second storage object included).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { LatchService, openLatch } from '../../src/engine/service.js';
import type { Latch } from '../../src/engine/contract.js';
import type { AuthorizationModelInput } from '../../src/domain/types.js';

const rel = (types: object[]): object => ({ directly_related_user_types: types });
const model = (viewer: object): AuthorizationModelInput =>
  ({
    schema_version: '1.1',
    type_definitions: [
      { type: 'user' },
      {
        type: 'doc',
        relations: { owner: { this: {} }, viewer },
        metadata: { relations: { owner: rel([{ type: 'user' }]), viewer: rel([{ type: 'user' }]) } },
      },
    ],
  }) as AuthorizationModelInput;
const BASE = model({ union: { child: [{ this: {} }, { computedUserset: { relation: 'owner' } }] } });
const CANDIDATE = model({ this: {} });
const carl = { user: 'user:carl', relation: 'viewer', object: 'doc:1' };

async function checkCarl(latch: Latch, storeId: string): Promise<boolean> {
  return (await latch.check({ storeId, tupleKey: carl, contextualTuples: [], consistency: 'MINIMIZE_LATENCY' }))
    .allowed;
}

it('LevelDB: the shadow setting survives a restart and the restarted node evaluates under it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'latch-shadow-'));
  try {
    let latch = await openLatch({ path: dir, expirySweepMs: 0 });
    const storeId = (await latch.createStore('s')).id;
    const candidate = await latch.writeModel(storeId, CANDIDATE);
    await latch.writeModel(storeId, BASE);
    await latch.write({
      storeId,
      writes: [{ user: 'user:carl', relation: 'owner', object: 'doc:1' }],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    const setting = await latch.setShadow({ storeId, modelId: candidate, sampling: 1 });
    await latch.close();

    latch = await openLatch({ path: dir, expirySweepMs: 0 });
    const service = latch as LatchService;
    expect(await latch.getShadow(storeId)).toEqual(setting);
    await vi.waitFor(async () => {
      expect(await checkCarl(latch, storeId)).toBe(true);
      await service.shadowIdle();
      expect((await latch.shadowReport(storeId)).disagreements).toBeGreaterThan(0);
    });
    const r = await latch.shadowReport(storeId);
    expect(r.records[0]).toMatchObject({
      operation: 'check',
      shadowModelId: candidate,
      answer: { allowed: true },
      shadowAnswer: { allowed: false },
      request: { tupleKey: carl },
    });
    await latch.clearShadow(storeId);
    await latch.close();
    latch = await openLatch({ path: dir, expirySweepMs: 0 });
    expect(await latch.getShadow(storeId)).toBeUndefined();
    await latch.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
