import { describe, expect, it } from 'vitest';
import { nextTurn, PriorityLane } from '../../src/domain/turn.js';

/** Lets `n` turns of the event loop pass. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await nextTurn();
}

describe('PriorityLane', () => {
  it('resolves a turn after one turn of the event loop when no section is open', async () => {
    const lane = new PriorityLane();
    let done = false;
    const p = lane.turn().then(() => (done = true));
    expect(done).toBe(false);
    await p;
    expect(done).toBe(true);
  });

  it('holds a turn while a section is open and releases it when the last one closes', async () => {
    const lane = new PriorityLane();
    lane.open();
    lane.open();
    const order: string[] = [];
    const waiting = [lane.turn().then(() => order.push('a')), lane.turn().then(() => order.push('b'))];
    await turns(5);
    expect(order).toEqual([]);
    lane.close();
    await turns(5);
    expect(order).toEqual([]);
    expect(lane.busy).toBe(true);
    lane.close();
    expect(lane.busy).toBe(false);
    await Promise.all(waiting);
    expect(order).toEqual(['a', 'b']);
  });

  it('holds a turn taken before a section opened in the same turn', async () => {
    const lane = new PriorityLane();
    let done = false;
    const p = lane.turn().then(() => (done = true));
    lane.open();
    await turns(5);
    expect(done).toBe(false);
    lane.close();
    await p;
    expect(done).toBe(true);
  });

  it('refuses a close without an open', () => {
    expect(() => new PriorityLane().close()).toThrow(/without open/);
  });
});
