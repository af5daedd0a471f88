// Rendezvous placement as a pure function: the same rows give the same owners, every store gets K
// distinct owners, shares follow capacity, and a join or a leave moves only the stores it must.
import { describe, expect, it } from 'vitest';
import { owners, placement, type PlacementMember } from '../../src/cluster/rendezvous.js';

const stores = Array.from({ length: 2000 }, (_, i) => `01J${String(i).padStart(8, '0')}STORE`);
const nodes = (n: number, capacity = (_: number) => 1): PlacementMember[] =>
  Array.from({ length: n }, (_, i) => ({ nodeId: `10.0.0.${i + 1}:8080`, capacity: capacity(i) }));

function shares(map: Map<string, string[]>): Map<string, number> {
  const out = new Map<string, number>();
  for (const list of map.values()) for (const n of list) out.set(n, (out.get(n) ?? 0) + 1);
  return out;
}

describe('rendezvous placement', () => {
  it('gives each store K distinct owners, the same from any order of the rows', () => {
    const members = nodes(5);
    const a = placement(stores, members, 2);
    const b = placement(stores, [...members].reverse(), 2);
    expect(b).toEqual(a);
    for (const list of a.values()) {
      expect(list).toHaveLength(2);
      expect(new Set(list).size).toBe(2);
    }
    expect(owners(stores[0] as string, members, 9)).toHaveLength(5);
    expect(owners(stores[0] as string, [], 2)).toEqual([]);
  });

  it('spreads stores evenly: each of 5 nodes holds K/N of them within 15%', () => {
    const s = shares(placement(stores, nodes(5), 2));
    for (const count of s.values()) expect(Math.abs(count - 800) / 800).toBeLessThan(0.15);
  });

  it('weights by capacity: a node of capacity 3 holds about three times the stores of one of capacity 1', () => {
    const members = nodes(4, (i) => (i === 0 ? 3 : 1));
    const s = shares(placement(stores, members, 1));
    const big = s.get('10.0.0.1:8080') ?? 0;
    const small = ((s.get('10.0.0.2:8080') ?? 0) + (s.get('10.0.0.3:8080') ?? 0) + (s.get('10.0.0.4:8080') ?? 0)) / 3;
    expect(big / small).toBeGreaterThan(2.5);
    expect(big / small).toBeLessThan(3.5);
  });

  it('a join moves only the stores the new node takes, each giving up exactly one owner', () => {
    const before = placement(stores, nodes(5), 2);
    const after = placement(stores, nodes(6), 2);
    const newcomer = '10.0.0.6:8080';
    let moved = 0;
    for (const id of stores) {
      const was = new Set(before.get(id));
      const now = after.get(id) as string[];
      if (!now.includes(newcomer)) {
        expect(new Set(now)).toEqual(was);
        continue;
      }
      moved++;
      expect(now.filter((n) => !was.has(n))).toEqual([newcomer]);
    }
    // The minimum: the newcomer's fair share, K/N of the stores (2/6 of 2000 ≈ 667).
    expect(Math.abs(moved - 667) / 667).toBeLessThan(0.15);
  });

  it("a leave moves only the leaving node's stores, each to exactly one new owner", () => {
    const before = placement(stores, nodes(5), 2);
    const gone = '10.0.0.3:8080';
    const after = placement(
      stores,
      nodes(5).filter((m) => m.nodeId !== gone),
      2,
    );
    for (const id of stores) {
      const was = before.get(id) as string[];
      const now = after.get(id) as string[];
      if (!was.includes(gone)) expect(now).toEqual(was);
      else {
        const kept = was.filter((n) => n !== gone);
        expect(kept.every((n) => now.includes(n))).toBe(true);
        expect(now.filter((n) => !kept.includes(n))).toHaveLength(1);
      }
    }
  });
});
