// Request ids: UUID-shaped and never repeated within a process, across the counter's block rollover.
import { expect, test } from 'vitest';
import { nextRequestId } from '../../src/http/reply-head.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{6}[1-9][0-9]{5}$/;

/** The id's position: block × 1e6 + decimal counter (ids of one process share the rest). */
function position(id: string): number {
  return parseInt(id.slice(24, 30), 16) * 1e6 + Number(id.slice(30));
}

test('every id is UUID-shaped and one step after the previous, across rollovers of both counter halves and of the block', () => {
  let prev = nextRequestId();
  const prefix = prev.slice(0, 24);
  let blocks = 0;
  // 900,000 ids fill one block: go past two block rollovers, checking every id.
  for (let i = 0; i < 1_900_000; i++) {
    const id = nextRequestId();
    // One expect per id would dominate the run: assert only when something is off.
    if (!UUID.test(id) || id.slice(0, 24) !== prefix)
      expect({ id, prefix: id.slice(0, 24) }).toEqual({ id: expect.stringMatching(UUID), prefix });
    const step = position(id) - position(prev);
    // Within a block the counter goes up by one; at a rollover it restarts at 100000 in the next block.
    if (step !== 1) {
      expect([prev.slice(30), id.slice(30), step]).toEqual(['999999', '100000', 1e6 - 899_999]);
      blocks++;
    }
    prev = id;
  }
  expect(blocks).toBe(2);
});
