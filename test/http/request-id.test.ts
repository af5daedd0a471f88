// Request ids: UUID-shaped and never repeated within a process, across the counter's block rollover.
import { expect, test } from 'vitest';
import { nextRequestId } from '../../src/http/exchange.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('ids stay UUID-shaped and distinct across a rollover of the decimal counter into the next block', () => {
  const first = nextRequestId();
  const seen = new Set<string>([first]);
  const tail: string[] = [];
  let kept = 1;
  // 900,000 ids fill one block: go past it, keeping the ids around the rollover.
  for (let i = 0; i < 1_000_000; i++) {
    const id = nextRequestId();
    if (i > 899_990 && i < 900_010) tail.push(id);
    if (i % 9_973 === 0 || i > 899_990) {
      seen.add(id);
      kept++;
    }
  }
  for (const id of [first, ...tail]) expect(id).toMatch(UUID);
  expect(new Set(tail).size).toBe(tail.length);
  expect(seen.size).toBe(kept); // no id kept twice
  expect(new Set(tail.map((id) => id.slice(0, 30))).size).toBe(2); // two blocks around the rollover
});
