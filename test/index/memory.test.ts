// The shared memory's allocator (src/index/memory.ts): every block handed out zero-filled, whether
// it reuses bytes an earlier block wrote or lies in memory no block has used yet (left unfilled,
// as `memory.grow` gave it). Other test files may share the allocator: nothing here depends on
// where a block lands.

import { describe, expect, it } from 'vitest';
import { Region, u8 } from '../../src/index/memory.js';

/** Whether every byte of `r` is 0. */
function zeroed(r: Region): boolean {
  const b = u8();
  for (let i = r.ptr; i < r.ptr + r.size; i++) if (b[i] !== 0) return false;
  return true;
}

describe('shared memory allocator', () => {
  it('hands out zeroed blocks over written, released and never used memory', () => {
    // Past the small-block bins: blocks from the free list and the top of the memory, growing it.
    const sizes = [256, 512, 1024, 2048, 4096, 8192].map((k) => k * 1024);
    for (let round = 0; round < 3; round++) {
      const held: Region[] = [];
      for (const size of sizes) {
        const r = new Region(size);
        expect(zeroed(r)).toBe(true);
        u8().fill(0xa5, r.ptr, r.ptr + size);
        held.push(r);
      }
      // Released last to first: the top shrinks back over written memory for the next round.
      for (const r of held.reverse()) r.drop();
    }
  });
});
