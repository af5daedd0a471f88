// The shadow settings refresh (src/engine/state/shadow-settings.ts): every store a node has seen
// is read again in ONE datastore read per round, whatever the number of stores, and the round's
// answers replace what the node knew (a setting made elsewhere appears, a cleared one goes, a
// deleted store is forgotten) without overwriting a setting this node made meanwhile.

import { describe, expect, it, vi } from 'vitest';
import { ShadowSettings } from '../../src/engine/state/shadow-settings.js';
import { openMemoryStorage } from '../../src/storage/index.js';
import type { Storage } from '../../src/storage/types.js';

/** The storage with its shadow reads counted. */
function counted(s: Storage): { storage: Storage; reads: { one: number; many: number } } {
  const reads = { one: 0, many: 0 };
  const storage = new Proxy(s, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      if (prop === 'readShadow') reads.one++;
      if (prop === 'readShadows') reads.many++;
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { storage, reads };
}

describe('shadow settings refresh', () => {
  it('reads every seen store in one datastore read per round', async () => {
    const base = await openMemoryStorage();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) ids.push((await base.createStore(`s${i}`)).id);
      const at = '2026-05-01T08:00:00.000Z';
      const x = { modelId: '01H000000000000000000000MM', sampling: 0.5, updatedAt: at };
      await base.writeShadow(ids[0] as string, x);
      const { storage, reads } = counted(base);
      const settings = new ShadowSettings(storage, 0, () => undefined);
      for (const id of ids) settings.get(id); // every store seen: each first read starts a load
      await vi.waitFor(() => expect(settings.get(ids[0] as string)).toBeDefined());
      await settings.refresh(); // every first load has settled: the round below sees only the changes
      const told: [string, unknown][] = [];
      settings.onChange = (id, setting) => told.push([id, setting]);
      const y = { ...x, sampling: 1 };
      // Another node's changes: a new setting on store 1, store 0's cleared, store 2 deleted.
      await base.writeShadow(ids[1] as string, y);
      await base.writeShadow(ids[0] as string, undefined);
      await base.deleteStore(ids[2] as string);
      const before = { ...reads };
      await settings.refresh();
      expect(reads.many - before.many).toBe(1);
      expect(reads.one - before.one).toBe(0);
      expect(settings.get(ids[1] as string)).toEqual(y);
      expect(settings.get(ids[0] as string)).toBeUndefined();
      expect(settings.get(ids[3] as string)).toBeUndefined();
      // The listeners (the HTTP threads' board) hear exactly the changes made elsewhere.
      expect(told.sort()).toEqual(
        [
          [ids[0], undefined],
          [ids[1], y],
        ].sort(),
      );
      settings.close();
    } finally {
      await base.close();
    }
  });

  it('a setting this node makes during a round is not overwritten by the round', async () => {
    const base = await openMemoryStorage();
    try {
      const id = (await base.createStore('s')).id;
      const { storage } = counted(base);
      const settings = new ShadowSettings(storage, 0, () => undefined);
      settings.get(id);
      await settings.refresh();
      const mine = { modelId: '01H000000000000000000000MM', sampling: 0.25, updatedAt: '2026-05-01T08:00:00.000Z' };
      const round = settings.refresh();
      settings.put(id, mine); // set here after the round's read began: the datastore still has none
      await round;
      expect(settings.get(id)).toEqual(mine);
      settings.close();
    } finally {
      await base.close();
    }
  });
});
