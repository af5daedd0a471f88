// Named graph shapes for the engine benchmarks. Each carries its model, its tuples and queries
// with the answers they must give; scenarios verify every answer before timing anything.

import { rng } from '../src/cli/bench-data.js';
import type { JsonObject, TupleKey } from '../src/domain/types.js';
import { dslToModel } from '../src/model/dsl.js';
import { validateAndCompile } from '../src/model/load.js';
import type { CompiledModel } from '../src/model/types.js';

export interface BenchQuery {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject;
  readonly want: boolean;
}

export interface Shape {
  readonly name: string;
  readonly model: CompiledModel;
  /** Emptied by scenarios once the index is built, so timing runs on a realistic heap. */
  readonly tuples: TupleKey[];
  readonly queries: BenchQuery[];
}

const HEAD = 'model\n  schema 1.1\ntype user\n';
let seq = 0;
export function compile(dsl: string): CompiledModel {
  return validateAndCompile(dslToModel(dsl), `01JBENCH${String(seq++).padStart(18, '0')}`);
}

/** Deterministic PRNG (mulberry32, shared with `latch bench`) so every run builds the same graph. */
export { rng };

const q = (
  object: string,
  relation: string,
  user: string,
  want: boolean,
  extra: Partial<BenchQuery> = {},
): BenchQuery => ({
  object,
  relation,
  user,
  want,
  contextualTuples: [],
  ...extra,
});

/** `docs` documents × `per` direct viewers out of 10,000 users (docs × per tuples). */
export function direct(docs = 100_000, per = 10): Shape {
  const model = compile(`${HEAD}type doc\n  relations\n    define viewer: [user]\n`);
  const tuples: TupleKey[] = [];
  for (let d = 0; d < docs; d++)
    for (let k = 0; k < per; k++)
      tuples.push({ object: `doc:${d}`, relation: 'viewer', user: `user:${(d * 7 + k * 1009) % 10_000}` });
  const r = rng(1);
  const queries: BenchQuery[] = [];
  for (let i = 0; i < 4096; i++) {
    const d = Math.floor(r() * docs);
    const k = Math.floor(r() * per);
    queries.push(
      i % 2 === 0
        ? q(`doc:${d}`, 'viewer', `user:${(d * 7 + k * 1009) % 10_000}`, true)
        : q(`doc:${d}`, 'viewer', `user:${10_000 + i}`, false),
    );
  }
  return { name: 'direct', model, tuples, queries };
}

/** doc → group g0 → g1 → … → g23 → user (24 userset hops), each group with 100 other members. */
export function nestedGroups(depth = 24): Shape {
  const model = compile(
    `${HEAD}type group\n  relations\n    define member: [user, group#member]\ntype doc\n  relations\n    define viewer: [user, group#member]\n`,
  );
  const tuples: TupleKey[] = [{ object: 'doc:1', relation: 'viewer', user: 'group:g0#member' }];
  for (let i = 0; i < depth - 1; i++)
    tuples.push({ object: `group:g${i}`, relation: 'member', user: `group:g${i + 1}#member` });
  tuples.push({ object: `group:g${depth - 1}`, relation: 'member', user: 'user:deep' });
  for (let i = 0; i < depth; i++)
    for (let k = 0; k < 100; k++) tuples.push({ object: `group:g${i}`, relation: 'member', user: `user:m${i}_${k}` });
  return {
    name: 'nested-groups-24',
    model,
    tuples,
    queries: [
      q('doc:1', 'viewer', 'user:deep', true),
      q('doc:1', 'viewer', 'user:nobody', false),
      q('doc:1', 'viewer', 'user:m12_5', true),
    ],
  };
}

/**
 * A lattice of groups: `levels` levels × `wide` groups, every group a member of every group in
 * the level above. Without the per-call memo a miss walks wide^levels paths; with it, each
 * (group, member) is evaluated once.
 */
export function groupLattice(levels = 24, wide = 4): Shape {
  const model = compile(
    `${HEAD}type group\n  relations\n    define member: [user, group#member]\ntype doc\n  relations\n    define viewer: [user, group#member]\n`,
  );
  const tuples: TupleKey[] = [];
  for (let i = 0; i < wide; i++) tuples.push({ object: 'doc:1', relation: 'viewer', user: `group:0_${i}#member` });
  for (let l = 0; l < levels - 1; l++) {
    for (let i = 0; i < wide; i++)
      for (let j = 0; j < wide; j++)
        tuples.push({ object: `group:${l}_${i}`, relation: 'member', user: `group:${l + 1}_${j}#member` });
  }
  tuples.push({ object: `group:${levels - 1}_${wide - 1}`, relation: 'member', user: 'user:deep' });
  return {
    name: `group-lattice-${levels}x${wide}`,
    model,
    tuples,
    queries: [q('doc:1', 'viewer', 'user:deep', true), q('doc:1', 'viewer', 'user:nobody', false)],
  };
}

/** 10 levels × 1,000 folders (`viewer from parent`), 10,000 docs under the last level. */
export function folderTree(levels = 10, wide = 1000): Shape {
  const model = compile(
    `${HEAD}type folder\n  relations\n    define parent: [folder]\n    define viewer: [user] or viewer from parent\ntype doc\n  relations\n    define parent: [folder]\n    define viewer: [user] or viewer from parent\n`,
  );
  const r = rng(2);
  const tuples: TupleKey[] = [];
  const parent: number[][] = [];
  for (let i = 0; i < wide; i++) tuples.push({ object: `folder:0_${i}`, relation: 'viewer', user: `user:u${i}` });
  for (let l = 1; l < levels; l++) {
    parent[l] = [];
    for (let i = 0; i < wide; i++) {
      const p = Math.floor(r() * wide);
      parent[l]![i] = p;
      tuples.push({ object: `folder:${l}_${i}`, relation: 'parent', user: `folder:${l - 1}_${p}` });
    }
  }
  const root = (i: number): number => {
    let x = i;
    for (let l = levels - 1; l >= 1; l--) x = parent[l]![x]!;
    return x;
  };
  const docs = wide * 10;
  for (let d = 0; d < docs; d++)
    tuples.push({ object: `doc:${d}`, relation: 'parent', user: `folder:${levels - 1}_${d % wide}` });
  const queries: BenchQuery[] = [];
  for (let i = 0; i < 2048; i++) {
    const d = Math.floor(r() * docs);
    const rt = root(d % wide);
    queries.push(
      i % 2 === 0
        ? q(`doc:${d}`, 'viewer', `user:u${rt}`, true)
        : q(`doc:${d}`, 'viewer', `user:u${(rt + 1) % wide}`, root(d % wide) === (rt + 1) % wide),
    );
  }
  return { name: 'folder-tree-10x1000', model, tuples, queries };
}

/** `viewer: writer and editor`, `reader: [user] but not blocked` over 50,000 docs. */
export function setOps(docs = 50_000): Shape {
  const model = compile(
    `${HEAD}type doc\n  relations\n    define writer: [user]\n    define editor: [user]\n    define blocked: [user]\n    define viewer: writer and editor\n    define reader: [user, user:*] but not blocked\n`,
  );
  const tuples: TupleKey[] = [];
  for (let d = 0; d < docs; d++) {
    tuples.push(
      { object: `doc:${d}`, relation: 'writer', user: `user:${d % 1000}` },
      { object: `doc:${d}`, relation: 'editor', user: `user:${d % 1000}` },
    );
    tuples.push({ object: `doc:${d}`, relation: 'writer', user: `user:w${d % 1000}` });
    tuples.push(
      { object: `doc:${d}`, relation: 'reader', user: 'user:*' },
      { object: `doc:${d}`, relation: 'blocked', user: `user:${d % 1000}` },
    );
  }
  const queries: BenchQuery[] = [];
  for (let i = 0; i < 2048; i++) {
    const d = (i * 37) % docs;
    queries.push(
      q(`doc:${d}`, 'viewer', `user:${d % 1000}`, true),
      q(`doc:${d}`, 'viewer', `user:w${d % 1000}`, false),
    );
    queries.push(q(`doc:${d}`, 'reader', `user:${d % 1000}`, false), q(`doc:${d}`, 'reader', `user:x${i}`, true));
  }
  return { name: 'intersection-exclusion', model, tuples, queries };
}

/** `viewer: [user with fresh]`, each tuple storing its own limit; the request sends `now`. */
export function conditions(docs = 20_000): Shape {
  const model = compile(
    `${HEAD}type doc\n  relations\n    define viewer: [user with fresh]\ncondition fresh(limit: int, now: int) {\n  now < limit\n}\n`,
  );
  const tuples: TupleKey[] = [];
  for (let d = 0; d < docs; d++)
    tuples.push({
      object: `doc:${d}`,
      relation: 'viewer',
      user: `user:${d % 500}`,
      condition: { name: 'fresh', context: { limit: d % 100 } },
    });
  const queries: BenchQuery[] = [];
  for (let i = 0; i < 2048; i++) {
    const d = (i * 31) % docs;
    const now = i % 100;
    queries.push(q(`doc:${d}`, 'viewer', `user:${d % 500}`, now < d % 100, { context: { now } }));
  }
  return { name: 'conditions', model, tuples, queries };
}

/** Direct graph plus 10 contextual tuples per check (one of them decides half the answers). */
export function contextual(): Shape {
  const base = direct(10_000, 5);
  const queries = base.queries.slice(0, 2048).map((x, i) => {
    const ctx: TupleKey[] = Array.from({ length: 10 }, (_, k) => ({
      object: `doc:${k}`,
      relation: 'viewer',
      user: `user:ctx${i}_${k}`,
    }));
    if (!x.want && i % 4 === 1) ctx.push({ object: x.object, relation: 'viewer', user: x.user });
    return { ...x, contextualTuples: ctx, want: x.want || i % 4 === 1 };
  });
  return { name: 'contextual-tuples', model: base.model, tuples: base.tuples, queries };
}
