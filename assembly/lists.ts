// Read-only accessors over the index bytes the host laid out: node types, the forward CSR, the
// sorted overlay / contextual records, the compiled program tables and restriction lists.
// Everything here is a pure function of memory plus the per-call globals set by `bind`.

import {
  C_CTX_COUNT, C_CTX_PTR, C_NOW_HI, C_NOW_LO, C_TCOND_COUNT, C_TCOND_NAME, C_TEMP_COUNT, C_TEMP_TYPES, COND_SHIFT, P_DIRECT, P_REACH, P_REACH_WORDS, P_REWRITE, P_STRIDE, P_TYPEMAP, P_TYPES,
  NO_COND_NAME, S_ADD_COUNT, S_ADD_PTR, S_BASE_NODES, S_COND_COUNT, S_COND_EXPIRY, S_COND_NAME, S_DEL_COUNT, S_DEL_PTR, S_FWD_ENT, S_FWD_KEY,
  S_FWD_NODE, S_NODE_COUNT, S_NODE_TYPE, SR_MASK, WILDCARD_BIT,
} from './abi';

// Per-call copies of header words (wasm globals are per instance, so per worker thread: safe).
export let nodeCount: u32 = 0;
let nodeTypes: usize = 0;
let tempCount: u32 = 0;
let tempTypes: usize = 0;
let baseNodes: u32 = 0;
let fwdNode: usize = 0;
let fwdKey: usize = 0;
export let fwdEnt: usize = 0;
export let addCount: u32 = 0;
export let addPtr: usize = 0;
export let delCount: u32 = 0;
export let delPtr: usize = 0;
export let ctxCount: u32 = 0;
export let ctxPtr: usize = 0;
let condCount: u32 = 0;
let condNames: usize = 0;
let condExpiry: usize = 0;
/** The request's instant in ms since the epoch (tuple expiry). */
let now: u64 = 0;
let tcondCount: u32 = 0;
let tcondNames: usize = 0;
let stride: u32 = 0;
let typeCount: u32 = 0;
let rewriteTab: usize = 0;
let directTab: usize = 0;
let typeMap: usize = 0;
let reachTab: usize = 0;
let reachWords: u32 = 0;

@inline function w(base: usize, word: i32): u32 {
  return load<u32>(base + (<usize>word << 2));
}

/** Caches the header words of one snapshot, one program and one call context. */
export function bind(snap: usize, prog: usize, ctx: usize): void {
  nodeCount = w(snap, S_NODE_COUNT);
  nodeTypes = w(snap, S_NODE_TYPE);
  baseNodes = w(snap, S_BASE_NODES);
  fwdNode = w(snap, S_FWD_NODE);
  fwdKey = w(snap, S_FWD_KEY);
  fwdEnt = w(snap, S_FWD_ENT);
  addCount = w(snap, S_ADD_COUNT);
  addPtr = w(snap, S_ADD_PTR);
  delCount = w(snap, S_DEL_COUNT);
  delPtr = w(snap, S_DEL_PTR);
  condCount = w(snap, S_COND_COUNT);
  condNames = w(snap, S_COND_NAME);
  condExpiry = w(snap, S_COND_EXPIRY);
  stride = w(prog, P_STRIDE);
  typeCount = w(prog, P_TYPES);
  rewriteTab = w(prog, P_REWRITE);
  directTab = w(prog, P_DIRECT);
  typeMap = w(prog, P_TYPEMAP);
  reachTab = w(prog, P_REACH);
  reachWords = w(prog, P_REACH_WORDS);
  ctxCount = w(ctx, C_CTX_COUNT);
  ctxPtr = w(ctx, C_CTX_PTR);
  tempCount = w(ctx, C_TEMP_COUNT);
  tempTypes = w(ctx, C_TEMP_TYPES);
  tcondCount = w(ctx, C_TCOND_COUNT);
  tcondNames = w(ctx, C_TCOND_NAME);
  now = (<u64>w(ctx, C_NOW_HI) << 32) | <u64>w(ctx, C_NOW_LO);
}

/** Type name id of a node, with WILDCARD_BIT set for `T:*` nodes; unknown ids get type NONE-ish 0x7fffffff. */
export function nodeType(n: u32): u32 {
  if (n < nodeCount) return load<u32>(nodeTypes + (<usize>n << 2));
  const t = n - nodeCount;
  if (t < tempCount) return load<u32>(tempTypes + (<usize>t << 2));
  return 0x7fffffff;
}

/** Rewrite node pointer of `type#rel`, 0 when the relation is not defined on the type. */
export function rewriteOf(type: u32, rel: u32): usize {
  if (type >= stride || rel >= stride) return 0;
  const slot = load<u32>(typeMap + (<usize>type << 2));
  if (slot >= typeCount) return 0;
  return load<u32>(rewriteTab + ((<usize>slot * stride + rel) << 2));
}

/**
 * True when `type#rel` is skipped for subject kind `kind` (§5.2 step 4, reach.ts): the model's
 * type graph has no path from the kind to it. NONE (a kind the model never names) reaches nothing.
 */
export function prunable(type: u32, rel: u32, kind: u32): bool {
  if (type >= stride || rel >= stride) return false;
  const slot = load<u32>(typeMap + (<usize>type << 2));
  if (slot >= typeCount) return false;
  if (kind == 0xffffffff) return true;
  const p = reachTab + (((<usize>slot * stride + rel) * reachWords + (kind >>> 5)) << 2);
  return ((load<u32>(p) >>> (kind & 31)) & 1) == 0;
}

/** Restriction list pointer of `type#rel` (its directly related user types), 0 when none. */
export function directOf(type: u32, rel: u32): usize {
  if (type >= stride || rel >= stride) return 0;
  const slot = load<u32>(typeMap + (<usize>type << 2));
  if (slot >= typeCount) return 0;
  return load<u32>(directTab + ((<usize>slot * stride + rel) << 2));
}

/**
 * Condition name id + 1 of stored binding `cond` (0 < cond < condCount), 0 when it only carries
 * an expiry; NONE when the binding has expired at the request's instant (it grants nothing).
 */
@inline function storedCondName(cond: u32): u32 {
  if (condExpiry != 0) {
    const e = load<u64>(condExpiry + (<usize>cond << 3));
    if (e != 0 && e <= now) return 0xffffffff;
  }
  const nm = load<u32>(condNames + (<usize>cond << 2));
  return nm == NO_COND_NAME ? 0 : nm + 1;
}

/** True when `meta`'s binding carries a condition to evaluate (not none, not expiry only). */
export function hasCondition(meta: u32): bool {
  const cond = meta >>> COND_SHIFT;
  if (cond == 0) return false;
  return cond >= condCount || load<u32>(condNames + (<usize>cond << 2)) != NO_COND_NAME;
}

/**
 * Read-time validity (semantics §4.5, rules 6-7 of §4.2), exactly as the model layer's
 * `isValidAtRead`: some restriction of the relation has the subject's type and form (object /
 * wildcard / userset relation); an unconditioned tuple needs such a restriction without a
 * condition; a conditioned tuple needs some restriction of the subject's *type* (any form) that
 * names its condition (the reference compares the type only). Example: with
 * `[user, user:* with c]`, `user:anne with c` is valid (form from `user`, condition from `user:*`).
 * A stored tuple whose `expires_at` is at or before the request's instant is invalid: from that
 * instant it grants nothing on any path.
 */
export function valid(restr: usize, subj: u32, meta: u32): bool {
  if (restr == 0) return false;
  const t = nodeType(subj);
  const type = t & ~WILDCARD_BIT;
  const sr = meta & SR_MASK;
  const form: u32 = sr != 0 ? sr + 1 : ((t & WILDCARD_BIT) != 0 ? 1 : 0);
  const cond = meta >>> COND_SHIFT;
  let cn: u32 = 0;
  if (cond != 0) {
    if (cond < condCount) {
      cn = storedCondName(cond);
      if (cn == 0xffffffff) return false;
    } else if (cond - condCount < tcondCount) cn = load<u32>(tcondNames + (<usize>(cond - condCount) << 2)) + 1;
    else return false;
  }
  const n = load<u32>(restr);
  let p = restr + 4;
  let formOk = false;
  let condOk = false;
  for (let i: u32 = 0; i < n; i++, p += 12) {
    if (load<u32>(p) != type) continue;
    const rc = load<u32>(p, 8);
    if (cn != 0 && rc == cn) condOk = true;
    if (load<u32>(p, 4) == form) {
      formOk = true;
      if (cn == 0 && rc == 0) condOk = true;
    }
    if (formOk && condOk) return true;
  }
  return false;
}

export function hasUsersetForm(restr: usize): bool {
  const n = load<u32>(restr);
  let p = restr + 4;
  for (let i: u32 = 0; i < n; i++, p += 12) if (load<u32>(p, 4) >= 2) return true;
  return false;
}

// Range results (two values; read immediately after the call, before any recursion).
export let lo: u32 = 0;
export let hi: u32 = 0;

/** Entry range [lo, hi) of the base forward list of `obj#rel` (empty when absent). */
export function baseRange(obj: u32, rel: u32): void {
  lo = 0;
  hi = 0;
  if (obj >= baseNodes) return;
  const k0 = load<u32>(fwdNode + (<usize>obj << 2));
  const k1 = load<u32>(fwdNode + (<usize>(obj + 1) << 2));
  for (let k = k0; k < k1; k++) {
    const p = fwdKey + (<usize>k << 3);
    if (load<u32>(p) == rel) {
      lo = load<u32>(p, 4);
      hi = load<u32>(p, 12);
      return;
    }
  }
}

/** First base entry index in [from, to) whose (subjRel, subject) >= (sr, subj). */
export function lowerBound(from: u32, to: u32, sr: u32, subj: u32): u32 {
  let a = from;
  let b = to;
  while (a < b) {
    const m = (a + b) >>> 1;
    const p = fwdEnt + (<usize>m << 3);
    const msr = load<u32>(p, 4) & SR_MASK;
    const ms = load<u32>(p);
    if (msr < sr || (msr == sr && ms < subj)) a = m + 1;
    else b = m;
  }
  return a;
}

/** Record range [lo, hi) of `obj#rel` in a sorted (obj, rel, subj, meta) record array. */
export function recordRange(ptr: usize, count: u32, obj: u32, rel: u32): void {
  let a: u32 = 0;
  let b = count;
  while (a < b) {
    const m = (a + b) >>> 1;
    const p = ptr + (<usize>m << 4);
    const mo = load<u32>(p);
    if (mo < obj || (mo == obj && load<u32>(p, 4) < rel)) a = m + 1;
    else b = m;
  }
  lo = a;
  let e = a;
  while (e < count) {
    const p = ptr + (<usize>e << 4);
    if (load<u32>(p) != obj || load<u32>(p, 4) != rel) break;
    e++;
  }
  hi = e;
}

/** True when [dlo, dhi) of the overlay deletes holds the subject (sr, subj). */
export function deleted(dlo: u32, dhi: u32, sr: u32, subj: u32): bool {
  for (let i = dlo; i < dhi; i++) {
    const p = delPtr + (<usize>i << 4);
    if (load<u32>(p, 8) == subj && (load<u32>(p, 12) & SR_MASK) == sr) return true;
  }
  return false;
}

// ---- batch prefetch (cache warming; never changes a result) ----
// A batch of independent checks is memory-bound: each direct check chases node → key → entry
// through three dependent random reads, and on this VM most of them miss the TLB as well. The
// batch loop (index.ts `checkBatch`) touches those lines for a group of queries, one level at a
// time for the whole group, so the group's misses are in flight together instead of one check's
// chain after another's.

/** Stage 1: the object's type word and forward-node word, the subject's type word. */
export function warm1(obj: u32, subj: u32): u32 {
  let s: u32 = 0;
  if (obj < nodeCount) s += load<u32>(nodeTypes + (<usize>obj << 2));
  if (obj < baseNodes) s += load<u32>(fwdNode + (<usize>obj << 2));
  if (subj < nodeCount) s += load<u32>(nodeTypes + (<usize>subj << 2));
  return s;
}

/** Stage 2: the object's first forward key (its line usually holds all of the object's keys). */
export function warm2(obj: u32): u32 {
  if (obj >= baseNodes) return 0;
  return load<u32>(fwdKey + (<usize>load<u32>(fwdNode + (<usize>obj << 2)) << 3));
}

/** Stage 3: the middle entry of `obj#rel`'s forward list, the binary search's first probe. */
export function warm3(obj: u32, rel: u32): u32 {
  baseRange(obj, rel);
  if (lo >= hi) return 0;
  return load<u32>(fwdEnt + (<usize>((lo + hi) >>> 1) << 3));
}
