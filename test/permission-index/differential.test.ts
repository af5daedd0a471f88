// The permission index against a recomputation: seeded random models with nested groups,
// tuple-to-userset, exclusion and intersection, thousands of random writes and deletes in small
// batches (one revision each), written in bursts the index maintains after they are acknowledged;
// once it caught up, (a) the materialised set (a fresh stream's initial snapshot) and (b) a stream
// folded from empty since the index became ACTIVE, racing the writes, must equal ListUsers over
// every object of every indexed relation. Zero differences. Every third model is monotone.
// LATCH_PI_SEEDS (default 6) and LATCH_PI_BATCHES (default 200 per seed) size the run.

import { describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { active, diff, fixture, Folded, oracle, snapshotSet } from './harness.js';

class Rng {
  constructor(private s: number) {}
  next(): number {
    this.s = (this.s + 0x6d2b79f5) | 0;
    let t = Math.imul(this.s ^ (this.s >>> 15), 1 | this.s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

interface Variant {
  readonly dsl: string;
  /** Tuple templates: (rng) → a tuple valid under the model. */
  readonly tuple: (r: Rng) => TupleKey;
  readonly relations: { object_type: string; relation: string }[];
}

const U = 8;
const G = 5;
const F = 4;
const D = 6;

/** `monotone`: no `but not` and no `and` (writes are granted without a Check). */
function variant(r: Rng, monotone: boolean): Variant {
  const banned = !monotone && r.chance(0.5);
  const folderRecursive = r.chance(0.7);
  const viewerParts = [
    '[user, group#member]',
    ...(r.chance(0.7) ? ['editor'] : []),
    ...(r.chance(0.8) ? ['viewer from parent'] : []),
  ];
  const exclusion = !monotone && r.chance(0.7);
  const intersection = !monotone && r.chance(0.6);
  const viewer = exclusion ? `(${viewerParts.join(' or ')}) but not blocked` : viewerParts.join(' or ');
  const dsl = `model
  schema 1.1
type user
type group
  relations
    define member: ${banned ? '[user, group#member] but not banned' : '[user, group#member]'}
${banned ? '    define banned: [user]\n' : ''}type folder
  relations
    define parent: [folder]
    define owner: [user, group#member]
    define viewer: [user, group#member] or owner${folderRecursive ? ' or viewer from parent' : ''}
type doc
  relations
    define parent: [folder]
    define blocked: [user, group#member]
    define owner: [user]
    define editor: [user, group#member] or owner
    define viewer: ${viewer}
${intersection ? '    define auditor: editor and viewer\n' : ''}`;
  const user = (): string => `user:${r.int(U)}`;
  const subject = (): string => (r.chance(0.35) ? `group:${r.int(G)}#member` : user());
  const tuple = (): TupleKey => {
    const k = r.int(banned ? 10 : 9);
    switch (k) {
      case 0: {
        const g = r.int(G);
        const u = subject();
        return { object: `group:${g}`, relation: 'member', user: u === `group:${g}#member` ? user() : u };
      }
      case 1:
        return { object: `folder:${r.int(F)}`, relation: 'parent', user: `folder:${r.int(F)}` };
      case 2:
        return { object: `folder:${r.int(F)}`, relation: r.pick(['owner', 'viewer']), user: subject() };
      case 3:
        return { object: `doc:${r.int(D)}`, relation: 'parent', user: `folder:${r.int(F)}` };
      case 4:
        return { object: `doc:${r.int(D)}`, relation: 'blocked', user: subject() };
      case 5:
        return { object: `doc:${r.int(D)}`, relation: 'owner', user: user() };
      case 6:
        return { object: `doc:${r.int(D)}`, relation: 'editor', user: subject() };
      case 7:
      case 8:
        return { object: `doc:${r.int(D)}`, relation: 'viewer', user: subject() };
      default:
        return { object: `group:${r.int(G)}`, relation: 'banned', user: user() };
    }
  };
  const relations = [
    { object_type: 'doc', relation: 'viewer' },
    { object_type: 'doc', relation: 'editor' },
    { object_type: 'folder', relation: 'viewer' },
  ];
  if (intersection) relations.push({ object_type: 'doc', relation: 'auditor' });
  return { dsl, tuple, relations };
}

const keyOf = (t: TupleKey): string => `${t.object}#${t.relation}@${t.user}`;
const OBJECTS = [
  ...Array.from({ length: F }, (_, i) => `folder:${i}`),
  ...Array.from({ length: D }, (_, i) => `doc:${i}`),
];

async function runSeed(seed: number, batches: number, monotone: boolean): Promise<number> {
  const r = new Rng(seed);
  const v = variant(r, monotone);
  const f = await fixture(v.dsl);
  const present = new Map<string, TupleKey>();
  let ops = 0;
  try {
    // Some tuples before the index exists: the build must materialise them.
    for (let i = 0; i < 10; i++) {
      const t = v.tuple(r);
      if (present.has(keyOf(t))) continue;
      await f.latch.write({ storeId: f.storeId, writes: [t], deletes: [], onDuplicate: 'error', onMissing: 'error' });
      present.set(keyOf(t), t);
    }
    const info = await f.latch.createPermissionIndex({ storeId: f.storeId, name: 'diff', relations: v.relations });
    await active(f, info.record.id);
    const ac = new AbortController();
    const folded = new Folded(
      f.latch.expansions(
        { storeId: f.storeId, indexId: info.record.id, modelId: f.modelId, heartbeatMs: 5000, lifetimeMs: 3_600_000 },
        ac.signal,
      ),
    );
    for (let b = 0; b < batches;) {
      // A burst of 1-3 writes (one revision each), acknowledged before the index maintains them:
      // the maintenance races the writes and the stream, and is compared once it caught up.
      const burst = 1 + r.int(3);
      let revision = 0;
      const applied: string[] = [];
      for (let k = 0; k < burst && b < batches; k++, b++) {
        const writes = new Map<string, TupleKey>();
        const deletes = new Map<string, TupleKey>();
        const n = 1 + r.int(6);
        for (let i = 0; i < n; i++) {
          if (present.size > 0 && r.chance(0.4)) {
            const all = [...present.values()];
            const t = r.pick(all);
            if (!writes.has(keyOf(t))) deletes.set(keyOf(t), t);
          } else {
            const t = v.tuple(r);
            if (!present.has(keyOf(t)) && !deletes.has(keyOf(t))) writes.set(keyOf(t), t);
          }
        }
        if (writes.size + deletes.size === 0) continue;
        const out = await f.latch.write({
          storeId: f.storeId,
          writes: [...writes.values()],
          deletes: [...deletes.values()],
          onDuplicate: 'error',
          onMissing: 'error',
        });
        revision = out.revision;
        ops += writes.size + deletes.size;
        for (const k of deletes.keys()) present.delete(k);
        for (const [k, t] of writes) present.set(k, t);
        applied.push(`+${[...writes.keys()].join(' +')} -${[...deletes.keys()].join(' -')}`);
      }
      if (applied.length === 0) continue;
      await f.latch.permissionIndexesCaughtUp(f.storeId);
      const want = await oracle(f, OBJECTS, v.relations, ['user']);
      const materialised = await snapshotSet(f, info.record.id);
      await folded.reach(revision);
      let context = `seed ${seed}, batch ${b}, revision ${revision}\n${v.dsl}`;
      if (process.env.LATCH_PI_DEBUG && diff(materialised, want).length > 0) {
        const checks: string[] = [];
        for (const d of diff(materialised, want)) {
          const [obj, rest] = d.slice(1).split('#') as [string, string];
          const [rel, user] = rest.split('@') as [string, string];
          const c = await f.latch.check({
            storeId: f.storeId,
            tupleKey: { object: obj, relation: rel, user },
            contextualTuples: [],
            consistency: 'MINIMIZE_LATENCY',
          });
          checks.push(`${d}: check=${String(c.allowed)}`);
        }
        context += `\nchecks: ${checks.join(', ')}\nbatches: ${applied.join(' | ')}\ntuples: ${[...present.keys()].sort().join(' ')}`;
      }
      expect(diff(materialised, want), `materialised vs ListUsers, ${context}`).toEqual([]);
      expect(diff(folded.set, want), `folded stream vs ListUsers, ${context}`).toEqual([]);
      expect(folded.problems, context).toEqual([]);
    }
    // Stable, strictly increasing ids: (revision, position) with no repeat.
    const ids = folded.ids.map((s) => s.split('.').map(Number) as [number, number]);
    for (let i = 1; i < ids.length; i++) {
      const [a, b] = [ids[i - 1] as [number, number], ids[i] as [number, number]];
      expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])).toBe(true);
    }
    ac.abort();
    await folded.done;
    return ops;
  } finally {
    await f.latch.close();
  }
}

describe('permission index: differential against ListUsers', () => {
  const seeds = Number(process.env.LATCH_PI_SEEDS ?? 6);
  const batches = Number(process.env.LATCH_PI_BATCHES ?? 200);
  it(
    `${seeds} random models × ${batches} batches: zero differences`,
    async () => {
      let ops = 0;
      // Every third model is monotone (no `but not`, no `and`): its writes are granted unchecked.
      for (let s = 1; s <= seeds; s++) ops += await runSeed(0x51ed + s * 7919, batches, s % 3 === 0);
      expect(ops).toBeGreaterThan(seeds * batches);
      console.info(`permission index differential: ${seeds} models, ${ops} tuple writes and deletes, zero differences`);
    },
    Math.max(120_000, seeds * batches * 100),
  );
});
