// The Check walker: evaluates `eval(object, relation)` for the call's constant subject over one
// snapshot + overlay + contextual tuples, with three-valued set operators, the cycle flag, the
// self-defining userset rule, read-time validity, conditions via the host and the depth limit.
// Never allocates: the path stack and the memo live in the caller-provided scratch.

import {
  COND_SHIFT, MEMO_SLOT, OP_COMPUTED, OP_DIFFERENCE, OP_INTERSECTION, OP_THIS, OP_TTU, OP_UNION,
  R_CYCLE, R_ERR_BUDGET, R_ERR_COND, R_ERR_DEPTH, R_ERR_NEEDHOST, R_ERR_OVERFLOW, R_FALSE, R_TRUE, SR_MASK, WILDCARD_BIT, NONE,
} from './abi';
import {
  addCount, addPtr, baseRange, ctxCount, ctxPtr, delCount, delPtr, deleted, directOf, fwdEnt, hasUsersetForm, hi, lo,
  hasCondition, lowerBound, nodeType, prunable, recordRange, rewriteOf, valid,
} from './lists';

/**
 * Host import: evaluates condition binding `cond` of the tuple `obj#rel@subj(#subjRel-1)` with the
 * request context `handle`. 0 false, 1 true, 2 evaluation error, 3 evaluator unavailable here.
 */
@external("env", "evalCondition")
declare function evalCondition(cond: u32, handle: u32, obj: u32, rel: u32, subj: u32, sr: u32): u32;

/** Host import: 1 once the running request's deadline has passed (DECISIONS D8), else 0. */
@external("env", "deadlinePassed")
declare function deadlinePassed(): u32;

// ---- per-call state (globals are per instance = per thread) ----
let subject: u32 = 0;
let subjRel: u32 = 0;
let wildNode: u32 = NONE;
let depthLimit: u32 = 25;
let handle: u32 = 0;
let subjKind: u32 = NONE;
let pathPtr: usize = 0;
let pathCap: u32 = 0;
let pathLen: u32 = 0;
let memoPtr: usize = 0;
let memoMask: u32 = 0;
let memoCount: u32 = 0;
let epoch: u32 = 0;
/** Evaluations in this call; past STEP_BUDGET the call gives up (semantics D8 complexity budget). */
let steps: u32 = 0;
/** Evaluations per call before R_ERR_BUDGET: about a second of walking. */
const STEP_BUDGET: u32 = 20_000_000;
/**
 * Evaluations of this instance across calls (never reset): every CLOCK_EVERY of them the host's
 * clock is read, so a request's deadline is met within ≈ 4 ms whether its time goes into one
 * call or into many cheap calls of a batch; a cheap single call never reads the clock.
 */
let clockSteps: u32 = 0;
const CLOCK_EVERY: u32 = 0xffff;
/**
 * The host said the deadline passed. Every later call asks again when it begins (one host call
 * per call, only in this state) and fails at once while it still has: the rest of a batch cut
 * short by its deadline costs nothing.
 */
let expired = false;
/**
 * Cycle hits and depth-limit cuts so far. A subtree that added none was walked completely: it
 * is the same under any ancestors and at any depth where it still fits under the limit.
 */
let stops: u32 = 0;
/** Deepest hop depth reached in the current subtree (for memo headroom); after a call, the call's resolution depth. */
export let maxDepth: u32 = 0;

export function setQuery(subj: u32, sr: u32, wild: u32, limit: u32, h: u32, kind: u32): void {
  subjKind = kind;
  subject = subj;
  subjRel = sr;
  wildNode = wild;
  depthLimit = limit;
  handle = h;
}

export function beginCall(path: usize, pcap: u32, memo: usize, mcap: u32, ep: u32): void {
  pathPtr = path;
  pathCap = pcap;
  pathLen = 0;
  memoPtr = memo;
  memoMask = mcap - 1;
  memoCount = 0;
  epoch = ep;
  stops = 0;
  maxDepth = 0;
  steps = 0;
  if (expired) {
    expired = deadlinePassed() != 0;
    if (expired) steps = STEP_BUDGET; // the first evaluation gives up
  }
}

@inline function isErr(r: i32): bool {
  return r >= R_ERR_COND;
}

/**
 * Two errors as one. R_ERR_NEEDHOST (a worker met a condition it cannot evaluate) is not an error
 * but an unknown: the host's walk may give any result there, so it outranks every error.
 */
@inline function errJoin(a: i32, b: i32): i32 {
  return a == R_ERR_NEEDHOST || b == R_ERR_NEEDHOST ? R_ERR_NEEDHOST : max(a, b);
}

/** Union (TRUE > ERROR > FALSE; the cycle flag survives only among FALSEs). */
@inline function unionAcc(acc: i32, r: i32): i32 {
  if (r == R_TRUE) return R_TRUE;
  if (isErr(r)) return isErr(acc) ? errJoin(acc, r) : r;
  if (r == R_CYCLE && acc == R_FALSE) return R_CYCLE;
  return acc;
}

function condResult(meta: u32, obj: u32, rel: u32, subj: u32): i32 {
  const cond = meta >>> COND_SHIFT;
  if (!hasCondition(meta)) return R_TRUE; // none, or an expiry only (checked by `valid`)
  const r = evalCondition(cond, handle, obj, rel, subj, meta & SR_MASK);
  if (r == 0) return R_FALSE;
  if (r == 1) return R_TRUE;
  return r == 2 ? R_ERR_COND : R_ERR_NEEDHOST;
}

// ---- path stack and memo ----

function onPath(obj: u32, rel: u32): bool {
  let p = pathPtr;
  for (let i: u32 = 0; i < pathLen; i++, p += 8) {
    if (load<u32>(p) == obj && load<u32>(p, 4) == rel) return true;
  }
  return false;
}

@inline function slotOf(obj: u32, rel: u32): u32 {
  return ((obj * 0x9e3779b1) ^ (rel * 0x85ebca6b)) & memoMask;
}

/**
 * Memo slot holding (obj, rel) for this epoch, or 0. Slot = (obj, rel, result | height << 8, epoch).
 */
function memoFind(obj: u32, rel: u32): usize {
  let i = slotOf(obj, rel);
  while (true) {
    const p = memoPtr + (<usize>i * MEMO_SLOT);
    if (load<u32>(p, 12) != epoch) break;
    if (load<u32>(p) == obj && load<u32>(p, 4) == rel) return p;
    i = (i + 1) & memoMask;
  }
  return 0;
}

function memoPut(obj: u32, rel: u32, result: i32, height: u32): void {
  if (memoCount >= (memoMask >>> 1)) return; // half full: stop memoising, answers stay exact
  let i = slotOf(obj, rel);
  for (;;) {
    const p = memoPtr + (<usize>i * MEMO_SLOT);
    if (load<u32>(p, 12) != epoch) {
      store<u32>(p, obj);
      store<u32>(p, rel, 4);
      store<u32>(p, <u32>result | (height << 8), 8);
      store<u32>(p, epoch, 12);
      memoCount++;
      return;
    }
    i = (i + 1) & memoMask;
  }
}

// ---- evaluation ----

/** eval(o, r) of semantics §5.2 for the call's subject at hop depth `depth`. */
export function evalRel(obj: u32, rel: u32, depth: u32): i32 {
  if (++steps > STEP_BUDGET) return R_ERR_BUDGET;
  if ((++clockSteps & CLOCK_EVERY) == 0 && deadlinePassed() != 0) {
    steps = STEP_BUDGET; // sticky: every later evaluation of this call gives up at once
    expired = true;
    return R_ERR_BUDGET;
  }
  if (depth >= depthLimit) {
    stops++;
    return R_ERR_DEPTH;
  }
  if (depth > maxDepth) maxDepth = depth;
  if (onPath(obj, rel)) {
    stops++;
    return R_CYCLE;
  }
  if (subjRel != 0 && obj == subject && rel + 1 == subjRel) return R_TRUE; // self-defining rule
  const type = nodeType(obj) & ~WILDCARD_BIT;
  const rw = rewriteOf(type, rel);
  if (rw == 0 || prunable(type, rel, subjKind)) return R_FALSE; // §5.2 step 4
  // The root is entered once per call, so it never hits the memo: skip the probe and the store.
  const root = pathLen == 0;
  const m: usize = root ? 0 : memoFind(obj, rel);
  if (m != 0) {
    const packed = load<u32>(m, 8);
    const mr = <i32>(packed & 0xff);
    const height = packed >>> 8;
    if (depth + height < depthLimit) {
      // The memoised subtree was walked completely, and from this depth it stays under the limit:
      // re-evaluating would explore the same nodes and reach the same answer.
      if (depth + height > maxDepth) maxDepth = depth + height;
      return mr;
    }
  }
  if (pathLen >= pathCap) return R_ERR_OVERFLOW;
  const pp = pathPtr + (<usize>pathLen << 3);
  store<u32>(pp, obj);
  store<u32>(pp, rel, 4);
  pathLen++;
  const before = stops;
  const savedMax = maxDepth;
  maxDepth = depth;
  const r = evalRewrite(rw, obj, type, rel, depth);
  const height = maxDepth - depth;
  if (savedMax > maxDepth) maxDepth = savedMax;
  pathLen--;
  // Memoise results of complete subtrees (no cycle hit, no depth cut below): TRUE, FALSE and
  // condition errors, with their height. A cut subtree is re-walked, even when its answer masks
  // the cut: a later visit higher up or under other ancestors may meet a cycle before the limit
  // and answer otherwise (`x and y` with a cut `x` is FALSE, with a cycle in `x` it is FALSE
  // with the flag, which a subtract turns into FALSE); the step budget bounds the cost.
  if (!root && stops == before && r != R_CYCLE && r <= R_ERR_COND) memoPut(obj, rel, r, height);
  return r;
}

function evalRewrite(node: usize, obj: u32, type: u32, rel: u32, depth: u32): i32 {
  const op = load<u32>(node);
  if (op == OP_THIS) return evalThis(<usize>load<u32>(node, 4), obj, rel, depth);
  if (op == OP_COMPUTED) return evalRel(obj, load<u32>(node, 4), depth);
  if (op == OP_TTU) return evalTTU(obj, type, load<u32>(node, 4), load<u32>(node, 8), depth);
  if (op == OP_UNION) {
    const n = load<u32>(node, 4);
    let acc = R_FALSE;
    for (let i: u32 = 0; i < n; i++) {
      acc = unionAcc(acc, evalRewrite(<usize>load<u32>(node + 8 + (<usize>i << 2)), obj, type, rel, depth));
      if (acc == R_TRUE) return R_TRUE;
    }
    return acc;
  }
  if (op == OP_INTERSECTION) {
    const n = load<u32>(node, 4);
    let acc = R_TRUE;
    for (let i: u32 = 0; i < n; i++) {
      const r = evalRewrite(<usize>load<u32>(node + 8 + (<usize>i << 2)), obj, type, rel, depth);
      // After an unknown child the host may have stopped there, with FALSE or the cycle flag:
      // this FALSE (or cycle) is not the host's answer, and the two differ under a subtract.
      if (r == R_FALSE || r == R_CYCLE) return acc == R_ERR_NEEDHOST ? acc : r;
      if (isErr(r)) acc = isErr(acc) ? errJoin(acc, r) : r;
    }
    return acc;
  }
  if (op == OP_DIFFERENCE) {
    const b = evalRewrite(<usize>load<u32>(node, 4), obj, type, rel, depth);
    // An unknown base may be FALSE or the cycle flag on the host, where it decides alone.
    if (b == R_FALSE || b == R_CYCLE || b == R_ERR_NEEDHOST) return b;
    const s = evalRewrite(<usize>load<u32>(node, 8), obj, type, rel, depth);
    if (s == R_TRUE) return R_FALSE;
    if (s == R_CYCLE) return R_CYCLE; // §5.3: a cycle in the subtract makes the difference FALSE
    if (isErr(b) || isErr(s)) return errJoin(b, s);
    return R_TRUE;
  }
  return R_FALSE;
}

/**
 * Union over the tuples `obj#rel@(sr, subj)` that are valid. A contextual copy of the key hides
 * the stored one (§5.8: the exact-key read returns the contextual tuple, whose condition counts).
 */
function lookupExact(restr: usize, obj: u32, rel: u32, sr: u32, subj: u32): i32 {
  let acc = R_FALSE;
  if (ctxCount != 0) {
    recordRange(ctxPtr, ctxCount, obj, rel);
    let seen = false;
    for (let j = lo; j < hi; j++) {
      const p = ctxPtr + (<usize>j << 4);
      const meta = load<u32>(p, 12);
      if (load<u32>(p, 8) != subj || (meta & SR_MASK) != sr) continue;
      seen = true;
      if (!valid(restr, subj, meta)) continue;
      acc = unionAcc(acc, condResult(meta, obj, rel, subj));
      if (acc == R_TRUE) return acc;
    }
    if (seen) return acc;
  }
  baseRange(obj, rel);
  const blo = lo;
  const bhi = hi;
  if (blo < bhi) {
    const i = lowerBound(blo, bhi, sr, subj);
    if (i < bhi) {
      const p = fwdEnt + (<usize>i << 3);
      const meta = load<u32>(p, 4);
      if (load<u32>(p) == subj && (meta & SR_MASK) == sr && valid(restr, subj, meta)) {
        let masked = false;
        if (delCount != 0) {
          recordRange(delPtr, delCount, obj, rel);
          masked = deleted(lo, hi, sr, subj);
        }
        if (!masked) acc = unionAcc(acc, condResult(meta, obj, rel, subj));
      }
    }
  }
  if (acc == R_TRUE || addCount == 0) return acc;
  recordRange(addPtr, addCount, obj, rel);
  for (let j = lo; j < hi; j++) {
    const p = addPtr + (<usize>j << 4);
    const meta = load<u32>(p, 12);
    if (load<u32>(p, 8) != subj || (meta & SR_MASK) != sr || !valid(restr, subj, meta)) continue;
    acc = unionAcc(acc, condResult(meta, obj, rel, subj));
    if (acc == R_TRUE) return acc;
  }
  return acc;
}

/** One candidate edge (userset member or tupleset parent): condition, then the recursive step. */
function followEdge(acc: i32, obj: u32, rel: u32, subj: u32, meta: u32, nextRel: u32, depth: u32): i32 {
  const c = condResult(meta, obj, rel, subj);
  if (c == R_FALSE) return acc;
  if (c != R_TRUE) return unionAcc(acc, c);
  // A tupleset parent whose type lacks the computed relation is skipped silently, with no hop
  // (so it can never hit the depth limit); its tuple's condition was still evaluated above.
  if (rewriteOf(nodeType(subj) & ~WILDCARD_BIT, nextRel) == 0) return acc;
  return unionAcc(acc, evalRel(subj, nextRel, depth + 1));
}

/**
 * Direct relationships (§5.4.1): (a) the exact tuple, (b) the subject type's wildcard tuple,
 * (c) every valid userset tuple `obj#rel@V:j#S`, each one tuple hop deeper.
 */
function evalThis(restr: usize, obj: u32, rel: u32, depth: u32): i32 {
  if (restr == 0) return R_FALSE;
  let acc = lookupExact(restr, obj, rel, subjRel, subject);
  if (acc == R_TRUE) return acc;
  if (subjRel == 0 && wildNode != NONE && wildNode != subject) {
    acc = unionAcc(acc, lookupExact(restr, obj, rel, 0, wildNode));
    if (acc == R_TRUE) return acc;
  }
  if (!hasUsersetForm(restr)) return acc;
  return followAll(acc, restr, obj, rel, depth, true, 0);
}

/**
 * Tuple-to-userset (§5.4.3): parents from valid `obj#ts` tuples (plain objects), `comp`
 * evaluated on each parent whose type defines it; other parents give FALSE (after the tupleset
 * tuple's condition was evaluated, as the reference reads and filters tuples first).
 */
function evalTTU(obj: u32, type: u32, ts: u32, comp: u32, depth: u32): i32 {
  const restr = directOf(type, ts);
  if (restr == 0) return R_FALSE;
  return followAll(R_FALSE, restr, obj, ts, depth, false, comp);
}

/**
 * Walks every valid entry of `obj#rel` across base (minus deletes), overlay adds and contextual
 * tuples: usersets (`usersets` = true, next relation = the entry's) or plain parents (next = comp).
 */
function followAll(acc0: i32, restr: usize, obj: u32, rel: u32, depth: u32, usersets: bool, comp: u32): i32 {
  let acc = acc0;
  baseRange(obj, rel);
  const blo = lo;
  const bhi = hi;
  let dlo: u32 = 0;
  let dhi: u32 = 0;
  if (delCount != 0 && blo < bhi) {
    recordRange(delPtr, delCount, obj, rel);
    dlo = lo;
    dhi = hi;
  }
  const start = usersets ? lowerBound(blo, bhi, 1, 0) : blo;
  for (let i = start; i < bhi; i++) {
    const p = fwdEnt + (<usize>i << 3);
    const subj = load<u32>(p);
    const meta = load<u32>(p, 4);
    const sr = meta & SR_MASK;
    if (!usersets && sr != 0) break; // plain entries sort first
    if (!valid(restr, subj, meta)) continue;
    if (dlo < dhi && deleted(dlo, dhi, sr, subj)) continue;
    acc = followEdge(acc, obj, rel, subj, meta, usersets ? sr - 1 : comp, depth);
    if (acc == R_TRUE) return acc;
  }
  for (let src = 0; src < 2; src++) {
    const ptr = src == 0 ? addPtr : ctxPtr;
    const count = src == 0 ? addCount : ctxCount;
    if (count == 0) continue;
    recordRange(ptr, count, obj, rel);
    const rlo = lo;
    const rhi = hi;
    for (let j = rlo; j < rhi; j++) {
      const p = ptr + (<usize>j << 4);
      const subj = load<u32>(p, 8);
      const meta = load<u32>(p, 12);
      const sr = meta & SR_MASK;
      if ((usersets ? sr == 0 : sr != 0) || !valid(restr, subj, meta)) continue;
      acc = followEdge(acc, obj, rel, subj, meta, usersets ? sr - 1 : comp, depth);
      if (acc == R_TRUE) return acc;
    }
  }
  return acc;
}
