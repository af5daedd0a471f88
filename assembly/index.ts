// The walker module's exports: numbers in, a status out. The host lays out every byte (index,
// program, per-call context and scratch); this module never allocates and never throws.

import {
  C_CTX_COUNT, C_DEPTH, C_DEPTH_LIMIT, C_HANDLE, C_MEMO_CAP, C_MEMO_PTR, C_OBJECT, C_PATH_CAP, C_PATH_PTR, C_PROGRAM, C_RELATION,
  C_SNAPSHOT, C_SUBJ_KIND, C_SUBJ_REL, C_SUBJECT, C_WILD_NODE, C_WORDS,
} from './abi';
import { bind, warm1, warm2, warm3 } from './lists';
import { beginCall, evalRel, maxDepth, setQuery } from './walker';

export const ABI_VERSION: u32 = 5;

export function abiVersion(): u32 {
  return ABI_VERSION;
}

@inline function cw(ctx: usize, word: i32): u32 {
  return load<u32>(ctx + (<usize>word << 2));
}

/** Word C_WORDS of the context holds the memo epoch, bumped per call so the memo never needs clearing. */
function nextEpoch(ctx: usize): u32 {
  const p = ctx + (<usize>C_WORDS << 2);
  let e = load<u32>(p) + 1;
  if (e == 0) e = 1;
  store<u32>(p, e);
  return e;
}

/**
 * One Check of `obj#rel` for the subject (subj, sr, wild, kind), with the depth limit, condition
 * handle and scratch of the context at `ctx` (bound by `bind`). Returns an R_* status.
 */
@inline function runCheck(ctx: usize, obj: u32, rel: u32, subj: u32, sr: u32, wild: u32, kind: u32): i32 {
  setQuery(subj, sr, wild, cw(ctx, C_DEPTH_LIMIT), cw(ctx, C_HANDLE), kind);
  beginCall(cw(ctx, C_PATH_PTR), cw(ctx, C_PATH_CAP), cw(ctx, C_MEMO_PTR), cw(ctx, C_MEMO_CAP), nextEpoch(ctx));
  return evalRel(obj, rel, 0);
}

/**
 * One Check described by the context at `ctx`. Returns an R_* status; the deepest hop it reached
 * (its resolution depth) goes to the context's word C_DEPTH, for the host's metrics: a memory
 * read there, where reading an exported global is a call into the engine (≈ 18 ns).
 */
export function check(ctx: usize): i32 {
  bind(cw(ctx, C_SNAPSHOT), cw(ctx, C_PROGRAM), ctx);
  const r = runCheck(ctx, cw(ctx, C_OBJECT), cw(ctx, C_RELATION), cw(ctx, C_SUBJECT), cw(ctx, C_SUBJ_REL), cw(ctx, C_WILD_NODE), cw(ctx, C_SUBJ_KIND));
  store<u32>(ctx + (<usize>C_DEPTH << 2), maxDepth);
  return r;
}

/** Sink for the prefetch loads of `checkBatch` (a global, so the loads are kept). */
export let warmed: u32 = 0;

/** Queries per prefetch group of `checkBatch`. */
const GROUP: u32 = 16;

/**
 * A batch of checks without contextual tuples: `queries` holds `count` records of 6 u32
 * (object, relation, subject, subjRel, wildNode, subjKind); statuses go to `out` as bytes.
 * The context at `ctx` supplies snapshot, program, limits and scratch.
 *
 * The batch runs in groups: first the lines each check of the group reads first are touched,
 * one level at a time for the whole group (lists.ts `warm1..3`: node, key, entry), so the
 * group's misses are in flight together instead of one check's chain after another's; then
 * the checks run over warm caches.
 */
export function checkBatch(ctx: usize, queries: usize, count: u32, out: usize): void {
  store<u32>(ctx + (<usize>C_CTX_COUNT << 2), 0);
  bind(cw(ctx, C_SNAPSHOT), cw(ctx, C_PROGRAM), ctx);
  let sink: u32 = 0;
  for (let g: u32 = 0; g < count; g += GROUP) {
    const end = min(count, g + GROUP);
    const first = queries + <usize>g * 24;
    const last = queries + <usize>end * 24;
    for (let q = first; q < last; q += 24) sink += warm1(load<u32>(q), load<u32>(q, 8));
    for (let q = first; q < last; q += 24) sink += warm2(load<u32>(q));
    for (let q = first; q < last; q += 24) sink += warm3(load<u32>(q), load<u32>(q, 4));
    for (let i = g; i < end; i++) {
      const q = queries + <usize>i * 24;
      store<u8>(out + i, <u8>runCheck(ctx, load<u32>(q), load<u32>(q, 4), load<u32>(q, 8), load<u32>(q, 12), load<u32>(q, 16), load<u32>(q, 20)));
    }
  }
  warmed = sink;
}

/** Forces a trap (used by the pool's crash test). */
export function trap(): void {
  unreachable();
}


