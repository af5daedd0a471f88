// A ReadExpansions `from` cursor far in the future was accepted and silently skipped every event
// up to its revision. A cursor past the store's last commit is refused (400 revision_in_future);
// one at the store's revision resumes and sees the next change.

import { afterEach, describe, expect, it } from 'vitest';
import { active, fixture, type Fixture } from './harness.js';

let f: Fixture | undefined;
afterEach(async () => {
  await f?.latch.close();
  f = undefined;
});

describe('ReadExpansions from', () => {
  it('attack: a from cursor past the store revision is refused, not silently skipping', async () => {
    f = await fixture('model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n');
    const fx = f;
    const w = await fx.latch.write({
      storeId: fx.storeId,
      writes: [{ object: 'doc:1', relation: 'viewer', user: 'user:anne' }],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    const info = await fx.latch.createPermissionIndex({
      storeId: fx.storeId,
      name: 'v',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
    });
    await active(fx, info.record.id);
    const open = (revision: number) => {
      const stream = fx.latch.expansions({
        storeId: fx.storeId,
        indexId: info.record.id,
        modelId: fx.modelId,
        heartbeatMs: 5000,
        lifetimeMs: 60_000,
        from: { revision, position: Infinity },
      });
      return stream[Symbol.asyncIterator]();
    };
    await expect(open(w.revision + 1_000_000).next()).rejects.toMatchObject({
      code: 'revision_in_future',
      status: 400,
    });
    // At the store's own revision: accepted, and the next change arrives.
    const it = open(w.revision);
    const first = it.next();
    await fx.latch.write({
      storeId: fx.storeId,
      writes: [{ object: 'doc:2', relation: 'viewer', user: 'user:bob' }],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    const seen: unknown[] = [];
    for (let r = await first; !r.done; r = await it.next()) {
      seen.push(r.value);
      if ((r.value as { kind?: string }).kind !== 'freshness' && JSON.stringify(r.value).includes('doc:2')) break;
    }
    expect(JSON.stringify(seen)).toContain('user:bob');
    await it.return?.(undefined);
  });
});
