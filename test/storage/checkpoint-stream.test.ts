// Streamed checkpoints across failures, on both backends: a process that dies between chunk
// batches, a final commit that fails, a commit racing a reader, and format-1 heads (no
// generation). The Kv under KvStorage is the real one (LevelDB in a temp directory, or the memory
// Kv kept across a "restart"), wrapped only to fail or delay chosen calls.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeJson, key } from '../../src/storage/codec.js';
import type { Kv, KvEntry, KvOp, KvRange, KvTextEntry } from '../../src/storage/kv.js';
import { KvStorage } from '../../src/storage/kv-storage.js';
import { openLevelKv } from '../../src/storage/level.js';
import { MemoryKv } from '../../src/storage/memory.js';
import { collect, writes } from './helpers.js';

const MiB8 = 8 * 1024 * 1024;

/** A Kv that passes everything to `inner`, except batches `failing` picks and a hook after `get`. */
class FaultyKv implements Kv {
  failing: (ops: readonly KvOp[]) => boolean = () => false;
  afterGet: ((key: string) => Promise<void>) | undefined;
  constructor(private readonly inner: Kv) {}
  async get(k: string): Promise<Uint8Array | undefined> {
    const v = await this.inner.get(k);
    await this.afterGet?.(k);
    return v;
  }
  getMany(keys: readonly string[]): Promise<(Uint8Array | undefined)[]> {
    return this.inner.getMany(keys);
  }
  async batch(ops: readonly KvOp[], sync: boolean): Promise<void> {
    if (this.failing(ops)) throw new Error('injected batch failure');
    return this.inner.batch(ops, sync);
  }
  entries(range: KvRange): AsyncIterable<KvEntry> {
    return this.inner.entries(range);
  }
  entryBatches(range: KvRange): AsyncIterable<readonly KvEntry[]> {
    return this.inner.entryBatches(range);
  }
  textBatches(range: KvRange): AsyncIterable<readonly KvTextEntry[]> {
    return this.inner.textBatches(range);
  }
  keys(range: KvRange): AsyncIterable<string> {
    return this.inner.keys(range);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

interface Backend {
  /** A storage over the backend's data; a second open after closing the first is a restart. */
  open(): Promise<{ storage: KvStorage; kv: FaultyKv }>;
  dispose(): Promise<void>;
}

const backends: [string, () => Promise<Backend>][] = [
  [
    'memory',
    async () => {
      const data = new MemoryKv();
      return {
        open: async () => {
          const kv = new FaultyKv(data);
          return { storage: await new KvStorage('memory', kv, { reclaim: false }).init(), kv };
        },
        dispose: async () => {},
      };
    },
  ],
  [
    'leveldb',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'latch-checkpoint-'));
      return {
        open: async () => {
          const kv = new FaultyKv(await openLevelKv(dir));
          return { storage: await new KvStorage('leveldb', kv, { reclaim: false }).init(), kv };
        },
        dispose: () => rm(dir, { recursive: true, force: true }),
      };
    },
  ],
];

const read = async (s: KvStorage, id: string): Promise<[number | undefined, number[][]]> => {
  const cp = await s.readCheckpoint(id);
  return [
    cp?.revision,
    (await collect(cp?.chunks ?? [])).map((c) => (c.byteLength > 16 ? [c.byteLength, c[0] ?? -1] : [...c])),
  ];
};

for (const [name, make] of backends) {
  describe(`streamed checkpoints: ${name}`, () => {
    let backend: Backend;
    const open: KvStorage[] = [];
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
      await backend.dispose();
    });
    const start = async (): Promise<{ storage: KvStorage; kv: FaultyKv; id: string }> => {
      backend = await make();
      const { storage, kv } = await backend.open();
      open.push(storage);
      const id = (await storage.createStore('cp')).id;
      await storage.writeTuples(id, writes('doc:1#viewer@user:anne'));
      return { storage, kv, id };
    };

    it('a crash after some chunk batches leaves the previous checkpoint; the next commit deletes the orphans', async () => {
      const { storage: a, id } = await start();
      await a.writeCheckpoint(id, 1, [new Uint8Array([1, 2, 3])]);
      const committed = await a.countStoreKeys(id);
      const dying = await a.openCheckpoint(id, 2);
      await dying.write(new Uint8Array(MiB8).fill(7));
      await dying.write(new Uint8Array(MiB8).fill(8));
      expect(await a.countStoreKeys(id)).toBe(committed + 2);
      // The process dies here: the writer never commits nor aborts.
      await a.close();
      open.length = 0;

      const { storage: b } = await backend.open();
      open.push(b);
      expect(await read(b, id)).toEqual([1, [[1, 2, 3]]]);
      expect(await b.countStoreKeys(id)).toBe(committed + 2);
      await b.writeCheckpoint(id, 3, [new Uint8Array([9])]);
      expect(await read(b, id)).toEqual([3, [[9]]]);
      // Head and one chunk, as before: the orphans went with the commit (and the new generation
      // did not reuse theirs, or one of them would have survived next to its chunk 0).
      expect(await b.countStoreKeys(id)).toBe(committed);
    });

    it('a failed final commit leaves the previous checkpoint and removes what the writer stored', async () => {
      const { storage, kv, id } = await start();
      await storage.writeCheckpoint(id, 1, [new Uint8Array([1])]);
      const committed = await storage.countStoreKeys(id);
      const head = key.checkpoint(id);
      kv.failing = (ops) => ops.some((op) => op.type === 'put' && op.key === head);
      const big = [new Uint8Array(MiB8), new Uint8Array(MiB8), new Uint8Array([2])];
      await expect(storage.writeCheckpoint(id, 2, big)).rejects.toThrow('injected batch failure');
      expect(await read(storage, id)).toEqual([1, [[1]]]);
      expect(await storage.countStoreKeys(id)).toBe(committed);

      // Now the abort fails too (the disk is gone): the chunks stay as orphans until a commit.
      const w = await storage.openCheckpoint(id, 3);
      await w.write(new Uint8Array(MiB8));
      kv.failing = () => true;
      await expect(w.commit()).rejects.toThrow('injected batch failure');
      await w.abort();
      expect(await storage.countStoreKeys(id)).toBe(committed + 1);
      expect(await read(storage, id)).toEqual([1, [[1]]]);
      kv.failing = () => false;
      await storage.writeCheckpoint(id, 4, [new Uint8Array([4])]);
      expect(await read(storage, id)).toEqual([4, [[4]]]);
      expect(await storage.countStoreKeys(id)).toBe(committed);
    });

    it("a commit landing between a reader's head and chunk reads shows the newer checkpoint, never a mix", async () => {
      const { storage, kv, id } = await start();
      await storage.writeCheckpoint(id, 1, [new Uint8Array([1]), new Uint8Array([1, 1])]);
      const head = key.checkpoint(id);
      let raced = false;
      kv.afterGet = async (k) => {
        if (k !== head || raced) return;
        raced = true; // the reader holds the head of revision 1; revision 2 commits now
        await storage.writeCheckpoint(id, 2, [new Uint8Array([2, 2, 2])]);
      };
      expect(await read(storage, id)).toEqual([2, [[2, 2, 2]]]);
      expect(raced).toBe(true);
    });

    it('a format-1 checkpoint (head without generation) is read, then replaced with its chunks', async () => {
      const { storage, kv, id } = await start();
      const bare = await storage.countStoreKeys(id);
      await kv.batch(
        [
          { type: 'put', key: key.checkpoint(id), value: encodeJson({ revision: 4, chunks: 3 }) },
          { type: 'put', key: key.legacyChunk(id, 0), value: new Uint8Array([10]) },
          { type: 'put', key: key.legacyChunk(id, 1), value: new Uint8Array([11]) },
          { type: 'put', key: key.legacyChunk(id, 2), value: new Uint8Array([12]) },
          // An orphan of a later writer that died, sorting between format-1 chunks 1 and 2.
          { type: 'put', key: key.chunk(id, 1, 0), value: new Uint8Array([99]) },
        ],
        true,
      );
      expect(await read(storage, id)).toEqual([4, [[10], [11], [12]]]);
      await storage.writeCheckpoint(id, 5, [new Uint8Array([5])]);
      expect(await read(storage, id)).toEqual([5, [[5]]]);
      expect(await storage.countStoreKeys(id)).toBe(bare + 2);
      expect(await kv.getMany([0, 1, 2].map((i) => key.legacyChunk(id, i)))).toEqual([undefined, undefined, undefined]);
    });
  });
}
