// The worker pool: batched answers equal inline answers (including items sent back to the host
// for conditions, contextual tuples and unseen objects); a trapped or crashed worker fails only
// its own task and the pool keeps answering; a condition the worker cannot evaluate leaves the
// item to the host even where an intersection or difference would otherwise decide without it.

import { afterAll, describe, expect, it } from 'vitest';
import { QUERY_WORDS, R_ERR_INTERNAL, R_TRUE } from '../../src/abi.js';
import { createWalkerChecker, type CheckItem } from '../../src/engine/evaluation/walker/checker.js';
import { CheckPool } from '../../src/engine/evaluation/pool/pool.js';
import { programFor } from '../../src/engine/evaluation/walker/program.js';
import { encodeQuery } from '../../src/engine/evaluation/walker/request.js';
import { walkerModule } from '../../src/engine/evaluation/walker/wasm.js';
import { index, model, tk } from './helpers.js';

const m = model(
  `model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\ntype doc\n  relations\n    define viewer: [user with c, group#member]\ncondition c(p: int) {\n  p > 0\n}\n`,
);
const tuples: string[] = [];
for (let g = 0; g < 50; g++) tuples.push(`group:g${g}#member@user:u${g}`, `doc:d${g}#viewer@group:g${g}#member`);
tuples.push('doc:c#viewer@user:cond[c]');
const ix = index(tuples);

function items(n: number): CheckItem[] {
  const out: CheckItem[] = [];
  for (let i = 0; i < n; i++) {
    const k = i % 7;
    if (k === 0)
      out.push({ object: 'doc:c', relation: 'viewer', user: 'user:cond', contextualTuples: [], context: { p: i % 2 } });
    else if (k === 1)
      out.push({
        object: 'doc:new',
        relation: 'viewer',
        user: 'user:x',
        contextualTuples: [{ object: 'doc:new', relation: 'viewer', user: 'group:g1#member' }],
      });
    else
      out.push({ object: `doc:d${i % 50}`, relation: 'viewer', user: `user:u${(i * 3) % 50}`, contextualTuples: [] });
  }
  return out;
}

describe('pool', () => {
  const checker = createWalkerChecker({ workers: 2, resolveDepth: 25, poolThreshold: 1000 });
  const pool = new CheckPool(2, walkerModule());
  afterAll(async () => {
    await checker.close();
    await pool.close();
  });

  it('batched answers equal inline answers (5,000 items)', async () => {
    const batch = items(5000);
    const snap = ix.snapshot();
    const pooled = await checker.check(snap, m, batch);
    const inline = batch.map((it) => checker.checkInline(snap, m, it));
    expect(pooled).toEqual(inline);
    expect(pooled.filter((o) => 'allowed' in o && o.allowed).length).toBeGreaterThan(0);
  });

  function queries(n: number): Uint32Array {
    const snap = ix.snapshot();
    const q = new Uint32Array(n * QUERY_WORDS);
    for (let i = 0; i < n; i++)
      encodeQuery(snap, programFor(m, snap.dict), 'doc:d1', 'viewer', 'user:u1', q, i * QUERY_WORDS);
    return q;
  }

  it('a trapped worker fails only its task', async () => {
    const snap = ix.snapshot();
    const prog = programFor(m, snap.dict);
    const bad = await pool.runIds(snap, prog, queries(3000), 25, 'trap');
    expect(bad.every((s) => s === R_ERR_INTERNAL)).toBe(true);
    const good = await pool.runIds(snap, prog, queries(3000), 25);
    expect(good.every((s) => s === R_TRUE)).toBe(true);
  });

  it('a crashed worker is replaced', async () => {
    const snap = ix.snapshot();
    const prog = programFor(m, snap.dict);
    const [bad, good] = await Promise.all([
      pool.runIds(snap, prog, queries(3000), 25, 'crash'),
      pool.runIds(snap, prog, queries(3000), 25),
    ]);
    expect(bad.every((s) => s === R_ERR_INTERNAL)).toBe(true);
    expect(good.every((s) => s === R_TRUE)).toBe(true);
    const after = await pool.runIds(snap, prog, queries(9000), 25);
    expect(after.every((s) => s === R_TRUE)).toBe(true);
  });

  // A worker cannot evaluate `small` (false here: x = 7), so `gate` is unknown to it. The host's
  // walk stops at `gate` (FALSE) or at `wall` (the cycle flag); under `but not` the two differ.
  const unknown = model(
    `model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define gate: [user with small]\n    define other: [user]\n    define loop: [user, doc#banned, doc#wall]\n    define banned: gate and loop\n    define wall: gate or loop\n    define fenced: wall and other\n    define viewer: [user] but not banned\n    define reader: [user] but not fenced\ncondition small(x: int) {\n  x < 5\n}\n`,
  );
  const unknownIx = index([
    'doc:1#viewer@user:a',
    'doc:1#gate@user:a[small {"x":7}]',
    'doc:1#loop@doc:1#banned',
    'doc:2#reader@user:a',
    'doc:2#gate@user:a[small {"x":7}]',
    'doc:2#loop@doc:2#wall',
  ]);
  const single = createWalkerChecker({ workers: 1, resolveDepth: 25, poolThreshold: 1 });
  afterAll(() => single.close());

  it.each([
    ['an intersection cut short by a cycle after the unknown', 'doc:1#viewer@user:a', true],
    ['an intersection cut short by FALSE after an unknown the host sees as a cycle', 'doc:2#reader@user:a', false],
  ])('%s answers as inline', async (_, query, allowed) => {
    const item = { ...tk(query), contextualTuples: [] };
    const snap = unknownIx.snapshot();
    expect(single.checkInline(snap, unknown, item)).toEqual({ allowed });
    expect(await single.check(snap, unknown, [item])).toEqual([{ allowed }]);
  });
});
