// The shared memory's allocator (src/index/memory.ts): every block handed out zero-filled, whether
// it reuses bytes an earlier block wrote or lies in memory no block has used yet (left unfilled,
// as `memory.grow` gave it).

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
    // Past the small-block bins: blocks taken from and returned to the top of the memory.
    const size = 256 * 1024;
    const a = new Region(size);
    expect(zeroed(a)).toBe(true);
    u8().fill(0xa5, a.ptr, a.ptr + size);
    a.drop(); // the last block: the top shrinks back to it

    // Half over a's written bytes, half over memory no block has used.
    const b = new Region(2 * size);
    expect(b.ptr).toBe(a.ptr);
    expect(zeroed(b)).toBe(true);
    u8().fill(0x5a, b.ptr, b.ptr + 2 * size);
    b.drop();

    // Written memory handed out again without a fill keeps its bytes (the caller writes them all).
    const c = new Region(size, false);
    expect(c.ptr).toBe(b.ptr);
    expect(u8()[c.ptr]).toBe(0x5a);
    c.drop();

    // Grown past everything used so far (the memory grows): zero throughout.
    const d = new Region(8 * size);
    expect(zeroed(d)).toBe(true);
    d.drop();
  });
});
