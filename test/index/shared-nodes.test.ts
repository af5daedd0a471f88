// The node table in shared memory and the board that publishes snapshots to the HTTP threads: a
// reader finds exactly the ids below the published node count (ASCII and wide strings, across the
// table's and the arena's growth), and a snapshot a reader has entered outlives its successor's
// publication until the reader leaves.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { allocatedBytes, Region, u32, u8 } from '../../src/index/memory.js';
import { shareNodeTables, SharedNodeTable, sharedNodeId } from '../../src/index/shared-nodes.js';
import { R } from '../../src/index/snapshot.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { BoardReader, ThreadBoard } from '../../src/index/thread-board.js';
import { tk } from '../walker/helpers.js';

describe('SharedNodeTable', () => {
  it('answers a reader with the ids below its limit, across growth, for ASCII and wide strings', () => {
    const list: string[] = [];
    const table = new SharedNodeTable(list);
    const strings = Array.from({ length: 5000 }, (_, i) => (i % 7 === 0 ? `doc:é→${i}` : `user:u${i}`));
    for (const s of strings.slice(0, 1000)) {
      list.push(s);
      table.add(s, list.length - 1);
    }
    const run = strings.slice(1000);
    list.push(...run);
    table.addRun(run, 1000);
    const at = table.at;
    strings.forEach((s, i) => {
      expect(table.get(s)).toBe(i);
      expect(sharedNodeId(u32(), u8(), at, s, strings.length)).toBe(i);
    });
    // A limit below an id: the entry is newer than the reader's snapshot.
    expect(sharedNodeId(u32(), u8(), at, 'user:u4000', 4000)).toBeUndefined();
    expect(sharedNodeId(u32(), u8(), at, 'user:u3999', 4000)).toBe(3999);
    for (const absent of ['user:u5000', 'doc:é→1', 'user:u', ''])
      expect(sharedNodeId(u32(), u8(), at, absent, strings.length)).toBeUndefined();
    table.drop();
  });

  it('keeps every string where it was written, and frees its chunks with the last holder', () => {
    const before = allocatedBytes();
    const list: string[] = [];
    const table = new SharedNodeTable(list);
    const add = (from: number, to: number): void => {
      for (let i = from; i < to; i++) {
        list.push(`doc:${i}`);
        table.add(list[i] as string, i);
      }
    };
    add(0, 100);
    // A published snapshot's view: ids below 100, held across the growth that follows.
    const early = table.at;
    const held = table.regions().map((r) => r.retain());
    add(100, 20_000);
    // The span directory never moves; the words were rehashed into a new region.
    expect(table.at.spans).toBe(early.spans);
    expect(table.at.words).not.toBe(early.words);
    for (const i of [0, 57, 99]) expect(sharedNodeId(u32(), u8(), early, `doc:${i}`, 100)).toBe(i);
    for (const i of [0, 99, 100, 16_383, 19_999])
      expect(sharedNodeId(u32(), u8(), table.at, `doc:${i}`, 20_000)).toBe(i);
    table.drop();
    // The snapshot's regions still read (the chunks are freed with the directory, not before).
    expect(sharedNodeId(u32(), u8(), early, 'doc:42', 100)).toBe(42);
    held.forEach((r: Region) => r.drop());
    expect(allocatedBytes()).toBe(before);
  });
});

describe('ThreadBoard', () => {
  beforeEach(() => shareNodeTables(true));
  afterEach(() => shareNodeTables(false));

  it('publishes every revision, and keeps an entered snapshot until its reader leaves', async () => {
    const board = new ThreadBoard();
    const reader = new BoardReader(board.buffer, 0);
    const index = StoreIndex.build(['doc:1#viewer@user:anne'].map(tk), 1);
    board.attach('01STORE', index);
    const slot = reader.find('01STORE');
    expect(slot).toBeGreaterThanOrEqual(0);
    expect(reader.find('01OTHER')).toBe(-1);

    const first = reader.enter(slot);
    const old = index.snapshot();
    expect(first).toBe(old.record);
    index.apply({ revision: 2, timestamp: '', deleted: [], written: [tk('doc:2#viewer@user:bob')] });
    // Published at the write (the board holds it before any reader of this thread asked).
    const second = index.snapshot().record;
    expect(second).not.toBe(first);
    expect(old.pinCount).toBe(1); // held for the reader that entered it
    reader.leave();
    expect(reader.enter(slot)).toBe(second);
    const w = u32();
    expect(w[(second >>> 2) + R.REV_LO]).toBe(2);
    expect(w[(second >>> 2) + R.NODE_COUNT]).toBe(index.snapshot().nodeCount);
    reader.leave();
    await vi.waitFor(() => expect(old.pinCount).toBe(0));

    board.detach('01STORE', index);
    expect(reader.find('01STORE')).toBe(-1);
    board.close();
    index.close();
  });
});
