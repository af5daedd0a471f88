// Background checkpoints of a serving index (StoreIndex.checkpointBase): the image is the base at
// the revision it reflects, whatever is written, merged or interned while it is copied; one copy
// at a time; a close or an explicit checkpoint stops it; version-1 images still load. Each case
// runs on LevelDB (a temp directory) and on the memory backend.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { checkStatus } from '../../src/engine/evaluation/walker/checker.js';
import { StoreIndex, type IndexSnapshot } from '../../src/index/store-index.js';
import { Region, u8 } from '../../src/index/memory.js';
import type { KvStorage } from '../../src/storage/kv-storage.js';
import { openLevelStorage } from '../../src/storage/level.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import type { CheckpointWriter, Storage, WriteResult } from '../../src/storage/types.js';
import { model } from '../walker/helpers.js';
import { everyTuple, stored } from './helpers.js';

const m = model(
  `model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\ntype doc\n  relations\n    define parent: [doc]\n    define viewer: [user, user:*, group#member with c] or viewer from parent\ncondition c(p: int) {\n  p > 0\n}\n`,
);

/** Reverse lookups (they read the node types) and walker Checks for every user of the model. */
function answers(s: IndexSnapshot, users: readonly string[], docs: number): string[] {
  const out: string[] = [];
  for (const u of users) {
    out.push(
      `${u} -> ${[...s.objects('doc', 'viewer', u)]
        .map((e) => e.object)
        .sort()
        .join(',')}`,
    );
    for (let d = 0; d < docs; d += 7) {
      const r = checkStatus(s, m, {
        object: `doc:${d}`,
        relation: 'viewer',
        user: u,
        contextualTuples: [],
        context: { p: 1 },
      });
      out.push(`doc:${d}#viewer@${u} => ${'allowed' in r ? String(r.allowed) : r.error.code}`);
    }
  }
  return out;
}

/** Deterministic tuples: docs with parents, users, groups, a wildcard, conditioned group grants. */
function tuple(i: number, docs: number): TupleKey {
  const r = (i * 2654435761) >>> 0;
  const doc = `doc:${r % docs}`;
  switch (r % 9) {
    case 0:
      return { object: doc, relation: 'parent', user: `doc:${(r >>> 7) % docs}` };
    case 1:
      return { object: `group:g${r % 40}`, relation: 'member', user: `user:u${(r >>> 9) % 300}` };
    case 2:
      return {
        object: doc,
        relation: 'viewer',
        user: `group:g${(r >>> 5) % 40}#member`,
        condition: { name: 'c', context: { p: (r >>> 3) % 3 } },
      };
    case 3:
      return { object: doc, relation: 'viewer', user: 'user:*' };
    default:
      return { object: doc, relation: 'viewer', user: `user:u${(r >>> 11) % 300}` };
  }
}

type Open = () => Promise<{ storage: KvStorage; dispose: () => Promise<void> }>;
const backends: [string, Open][] = [
  [
    'leveldb',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'latch-bgcp-'));
      const storage = await openLevelStorage(dir);
      return {
        storage,
        dispose: async () => {
          await storage.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'memory',
    async () => {
      const storage = await openMemoryStorage();
      return { storage, dispose: () => storage.close() };
    },
  ],
];

/** The same storage, but every chunk a checkpoint writer is given first waits for `before(n)`. */
function interleaved(storage: Storage, before: (chunk: number) => Promise<void>): Storage {
  const wrap = (w: CheckpointWriter): CheckpointWriter => {
    let n = 0;
    return {
      write: async (c) => {
        await before(n++);
        return w.write(c);
      },
      commit: () => w.commit(),
      abort: () => w.abort(),
    };
  };
  return Object.assign(Object.create(storage) as Storage, {
    openCheckpoint: async (id: string, rev: number) => wrap(await storage.openCheckpoint(id, rev)),
  });
}

for (const [name, open] of backends) {
  describe(`background checkpoints: ${name}`, () => {
    let dispose: () => Promise<void> = async () => {};
    afterEach(async () => dispose());

    /** A store with `n` tuples (and their live set), indexed from a checkpoint image. */
    async function setup(
      n: number,
      docs: number,
    ): Promise<{ storage: KvStorage; id: string; live: Map<string, TupleKey>; ix: StoreIndex }> {
      const h = await open();
      dispose = h.dispose;
      const storage = h.storage;
      const id = (await storage.createStore('s')).id;
      const live = new Map<string, TupleKey>();
      for (let i = 0; live.size < n; i++) {
        const t = tuple(i, docs);
        live.set(`${t.object}#${t.relation}@${t.user}`, t);
      }
      const all = [...live.values()];
      for (let i = 0; i < all.length; i += 1000)
        await storage.writeTuples(id, {
          writes: all.slice(i, i + 1000),
          deletes: [],
          onDuplicate: 'error',
          onMissing: 'error',
        });
      const scanned = await StoreIndex.load(storage, id);
      await scanned.checkpoint(storage, id);
      scanned.close();
      // Loaded from the image, the dictionary's node-type array holds exactly the image's nodes
      // (plus 16): the first new nodes during a copy move it.
      const ix = await StoreIndex.load(storage, id, { mergeThreshold: 1e9, retireAfterMs: 0 });
      expect(ix.loaded.fromCheckpoint).toBe(true);
      return { storage, id, live, ix };
    }

    /** One write through storage and the index: `k` new tuples (new objects and users) and `k` deletes of live ones. */
    function writer(
      storage: Storage,
      id: string,
      ix: StoreIndex,
      live: Map<string, TupleKey>,
    ): (tag: string, k: number) => Promise<WriteResult> {
      return async (tag, k) => {
        const writes: TupleKey[] = [];
        for (let j = 0; j < k; j++)
          writes.push(
            j % 3 === 0
              ? {
                  object: `doc:${tag}-${j}`,
                  relation: 'viewer',
                  user: `group:${tag}#member`,
                  condition: { name: 'c', context: { p: j } },
                }
              : { object: `doc:${tag}-${j}`, relation: 'viewer', user: `user:${tag}-${j}` },
          );
        const deletes = [...live.values()].slice(0, k);
        const r = await storage.writeTuples(id, { writes, deletes, onDuplicate: 'error', onMissing: 'error' });
        ix.apply(r);
        for (const t of deletes) live.delete(`${t.object}#${t.relation}@${t.user}`);
        for (const t of writes) live.set(`${t.object}#${t.relation}@${t.user}`, t);
        return r;
      };
    }

    it('writes, merges and new nodes while the image is copied do not leak into it: image + tail = a fresh build', async () => {
      const docs = 1500;
      const { storage, id, live, ix } = await setup(6000, docs);
      const write = writer(storage, id, ix, live);
      await write('pre', 200);
      await ix.merge(); // the base now reflects this revision: the image's
      const imageRevision = ix.currentRevision;
      await write('overlay', 50); // in the overlay only: must stay out of the image

      let calls = 0;
      const junk: Region[] = [];
      const during = interleaved(storage, async (chunk) => {
        calls++;
        // Between two slices of the copy: writes with new nodes (the node-type array moves), a full
        // merge that replaces the base being copied (the index drops its reference), snapshots,
        // and a timer turn so superseded snapshots release their memory.
        const types = ix.dict.nodeTypes.region;
        await write(`c${chunk}`, 400);
        for (let k = 0; chunk === 0 && k < 10 && ix.dict.nodeTypes.region === types; k++) await write(`c0-${k}`, 400);
        ix.snapshot();
        if (chunk < 3) await ix.merge();
        await write(`d${chunk}`, 30);
        ix.snapshot();
        await new Promise((r) => setTimeout(r, 5));
        if (chunk === 0) {
          // The old node-type array is free now; the next allocation of its size overwrites it.
          expect([types === ix.dict.nodeTypes.region, types.alive]).toEqual([false, false]);
          const r = new Region(types.size);
          u8().fill(0xee, r.ptr, r.ptr + r.size);
          junk.push(r);
        }
      });
      expect(await ix.checkpointBase(during, id)).toBe('written');
      for (const r of junk) r.drop();
      expect(calls).toBe(4); // header, node strings, node types, base: something ran before each
      expect(ix.checkpointRevision).toBe(imageRevision);
      expect(ix.currentRevision).toBeGreaterThan(imageRevision + 8);

      const later = (await collectAll(storage.changesSince(id, imageRevision))).length;
      const loaded = await StoreIndex.load(storage, id, { mergeThreshold: 1e9 });
      expect(loaded.loaded).toEqual({ fromCheckpoint: true, tailChanges: later });
      const truth = (await collectAll((await storage.scanTuples(id)).tuples)).map(stored).sort();
      expect(truth).toEqual([...live.values()].map(stored).sort());
      const fresh = StoreIndex.build(live.values(), 1);
      expect(everyTuple(loaded.snapshot())).toEqual(truth);
      expect(everyTuple(ix.snapshot())).toEqual(truth);
      const users = [
        'user:*',
        'group:c0#member',
        'group:g3#member',
        'user:c1-1',
        'user:d2-4',
        ...Array.from({ length: 300 }, (_, u) => `user:u${u}`),
      ];
      expect(answers(loaded.snapshot(), users, docs)).toEqual(answers(fresh.snapshot(), users, docs));
      for (const x of [ix, loaded, fresh]) x.close();
    });

    it('one copy at a time; close stops it (the previous image stays, no chunk is left); checkpoint() takes over from it', async () => {
      const { storage, id, live, ix } = await setup(3000, 800);
      const write = writer(storage, id, ix, live);
      const imageRevision = ix.currentRevision;
      await write('x', 100);
      await ix.merge();
      const bare = await storage.countStoreKeys(id);

      let skipped: string | undefined;
      const stopByClose = interleaved(storage, async (chunk) => {
        if (chunk === 0) skipped = await ix.checkpointBase(storage, id);
        if (chunk === 1) ix.close();
      });
      expect(await ix.checkpointBase(stopByClose, id)).toBe('cancelled');
      expect(skipped).toBe('skipped');
      expect(await ix.checkpointBase(storage, id)).toBe('skipped'); // closed
      expect((await storage.readCheckpoint(id))?.revision).toBe(imageRevision);
      expect(await storage.countStoreKeys(id)).toBe(bare);

      const again = await StoreIndex.load(storage, id, { mergeThreshold: 1e9 });
      const write2 = writer(storage, id, again, live);
      await write2('y', 100);
      await again.merge();
      await write2('z', 10);
      let explicit: Promise<string> | undefined;
      const stopByCheckpoint = interleaved(storage, async (chunk) => {
        if (chunk === 1) explicit = again.checkpoint(storage, id);
      });
      expect(await again.checkpointBase(stopByCheckpoint, id)).toBe('cancelled');
      expect(await explicit).toBe('written');
      expect((await storage.readCheckpoint(id))?.revision).toBe(again.currentRevision);
      const loaded = await StoreIndex.load(storage, id);
      expect(loaded.loaded).toEqual({ fromCheckpoint: true, tailChanges: 0 });
      expect(everyTuple(loaded.snapshot())).toEqual([...live.values()].map(stored).sort());
      again.close();
      loaded.close();
    });

    /**
     * A hand-written image of an older version: its header, the node strings as that version laid
     * them out, then the node types and the base (versions 1 and 2 put the strings first).
     */
    const legacyImage = (ix: StoreIndex, v: 1 | 2): Uint8Array[] => {
      const s = ix.snapshot();
      const nodes = s.base.layout.nodes;
      const strings: Buffer[] = [];
      if (v === 1) strings.push(Buffer.from(ix.dict.nodeList.slice(0, nodes).join('\n'), 'utf8'));
      else
        for (let i = 0; i < nodes; i += 100) {
          const text = Buffer.from(ix.dict.nodeList.slice(i, Math.min(i + 100, nodes)).join('\n'), 'utf8');
          const frame = Buffer.alloc(8);
          frame.writeUInt32LE(Math.min(100, nodes - i), 0);
          frame.writeUInt32LE(text.byteLength, 4);
          strings.push(Buffer.concat([frame, text]));
        }
      const header = {
        v,
        names: ix.dict.nameList,
        nodes,
        ...(v === 1 ? { stringBytes: strings[0]?.byteLength ?? 0 } : {}),
        layout: s.base.layout,
        conds: ix.dict.conds.slice(1).map((c) => (c.context ? { name: c.name, context: c.context } : { name: c.name })),
      };
      const types = u8().slice(ix.dict.nodeTypes.region.ptr, ix.dict.nodeTypes.region.ptr + nodes * 4);
      const base = u8().slice(s.base.region.ptr, s.base.region.ptr + s.base.bytes);
      return [Buffer.from(JSON.stringify(header)), ...strings, types, base];
    };

    for (const v of [1, 2] as const)
      it(`an image of version ${v} (node strings before the types and the base) still loads`, async () => {
        const { storage, id, live, ix } = await setup(2000, 500);
        const image = legacyImage(ix, v);
        if (v === 2) expect(image.length).toBeGreaterThan(4); // several string blocks
        await storage.writeCheckpoint(id, ix.currentRevision, image);
        const loaded = await StoreIndex.load(storage, id);
        expect(loaded.loaded).toEqual({ fromCheckpoint: true, tailChanges: 0 });
        expect(loaded.dict.nodeList).toEqual(ix.dict.nodeList.slice(0, ix.snapshot().base.layout.nodes));
        expect(everyTuple(loaded.snapshot())).toEqual([...live.values()].map(stored).sort());
        ix.close();
        loaded.close();
      });

    it('an image of a format this code does not know (a newer node wrote it): the store loads from its tuples', async () => {
      const { storage, id, live, ix } = await setup(2000, 500);
      const [, ...rest] = legacyImage(ix, 2);
      const header = Buffer.from(JSON.stringify({ v: 99, names: ix.dict.nameList, nodes: 0 }));
      await storage.writeCheckpoint(id, ix.currentRevision, [header, ...rest]);
      const loaded = await StoreIndex.load(storage, id);
      expect(loaded.loaded).toEqual({ fromCheckpoint: false, tailChanges: 0 });
      expect(everyTuple(loaded.snapshot())).toEqual([...live.values()].map(stored).sort());
      ix.close();
      loaded.close();
    });
  });
}

async function collectAll<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
