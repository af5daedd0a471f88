// Turns one Check request (strings) into the walker's per-call context in a scratch Region:
// interned ids from the snapshot, temporary ids for strings the snapshot has never seen, and the
// contextual tuples as sorted records with temporary condition bindings. Owns the scratch layout.

import type { JsonObject, RelationshipCondition, TupleKey } from '../../domain/types.js';
import { C, MEMO_SLOT, NONE, WILDCARD_BIT } from '../../abi.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import { Region, u32 } from '../../index/memory.js';
import type { Program } from './program.js';

const CTX_BYTES = 128;
export const PATH_CAP = 2048;
export const MEMO_CAP = 8192;
const MAX_CTX = 128;
const MAX_TEMP = 512;
const PATH_AT = CTX_BYTES;
const MEMO_AT = PATH_AT + PATH_CAP * 8;
const RECS_AT = MEMO_AT + MEMO_CAP * MEMO_SLOT;
const TEMP_AT = RECS_AT + MAX_CTX * 16;
const TCOND_AT = TEMP_AT + MAX_TEMP * 4;
export const SCRATCH_BYTES = TCOND_AT + MAX_CTX * 4;

/** A subject that matches no node: used for users no tuple mentions (their answers need no id). */
export const UNSEEN = 0xfffffffe;

/** One thread-call scratch area: context header, path stack, memo, contextual records. */
export class Scratch {
  readonly region = new Region(SCRATCH_BYTES);
  get ctx(): number {
    return this.region.ptr;
  }
  /** Writes the fixed words (areas, snapshot, program, limit) and clears the per-request parts. */
  bind(snapshot: IndexSnapshot, program: Program, depthLimit: number): void {
    const m = u32();
    const c = this.region.ptr >>> 2;
    const p = this.region.ptr;
    m[c + C.DEPTH_LIMIT] = depthLimit;
    m[c + C.MEMO_PTR] = p + MEMO_AT;
    m[c + C.MEMO_CAP] = MEMO_CAP;
    m[c + C.PATH_PTR] = p + PATH_AT;
    m[c + C.PATH_CAP] = PATH_CAP;
    m[c + C.SNAPSHOT] = snapshot.header;
    m[c + C.PROGRAM] = program.ptr;
    m[c + C.CTX_COUNT] = 0;
    m[c + C.CTX_PTR] = p + RECS_AT;
    m[c + C.TEMP_COUNT] = 0;
    m[c + C.TEMP_TYPES] = p + TEMP_AT;
    m[c + C.TCOND_COUNT] = 0;
    m[c + C.TCOND_NAME] = p + TCOND_AT;
    m[c + C.HANDLE] = 0;
  }
}

export interface CheckRequest {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
}

/** Host-side state of one call: what the condition hook and error messages need. */
export class CallState {
  readonly tempNodes: string[] = [];
  private readonly tempIds = new Map<string, number>();
  readonly tempConds: RelationshipCondition[] = [];
  context: JsonObject | undefined;
  constructor(readonly snapshot: IndexSnapshot) {}

  /** Node id of `s`, a temporary id past the snapshot's nodes when unseen (`intern`), else UNSEEN. */
  node(s: string, intern: boolean): number {
    const id = this.snapshot.nodeId(s);
    if (id !== undefined) return id;
    const t = this.tempIds.get(s);
    if (t !== undefined) return t;
    if (!intern) return UNSEEN;
    if (this.tempNodes.length >= MAX_TEMP) throw new RangeError('latch: too many unseen strings in one request');
    const nid = this.snapshot.nodeCount + this.tempNodes.length;
    const colon = s.indexOf(':');
    const type = this.snapshot.dict.names.get(s.slice(0, colon)) ?? 0x7fffffff;
    u32()[(u32()[(ctxOf(this) >>> 2) + C.TEMP_TYPES] ?? 0) / 4 + this.tempNodes.length] =
      s.length === colon + 2 && s.endsWith('*') ? (type | WILDCARD_BIT) >>> 0 : type;
    this.tempNodes.push(s);
    this.tempIds.set(s, nid);
    u32()[(ctxOf(this) >>> 2) + C.TEMP_COUNT] = this.tempNodes.length;
    return nid;
  }

  nodeString(id: number): string {
    return id < this.snapshot.nodeCount ? (this.snapshot.dict.nodeList[id] ?? '') : (this.tempNodes[id - this.snapshot.nodeCount] ?? '');
  }

  /** The stored or contextual condition binding of a walker condition id. */
  binding(cond: number): RelationshipCondition | undefined {
    return cond < this.snapshot.condCount ? this.snapshot.dict.conds[cond] : this.tempConds[cond - this.snapshot.condCount];
  }
  scratchCtx = 0;
}

function ctxOf(s: CallState): number {
  return s.scratchCtx;
}

/** Splits a user string into (node string, subjRel name or undefined). */
function splitUser(user: string): [string, string | undefined] {
  const hash = user.lastIndexOf('#');
  return hash === -1 ? [user, undefined] : [user.slice(0, hash), user.slice(hash + 1)];
}

/**
 * Writes the query and the contextual tuples of `req` into `scratch` (already bound).
 * Contextual records are sorted (obj, rel, subjRel, subj) like overlay records.
 */
export function prepare(scratch: Scratch, state: CallState, req: CheckRequest): void {
  state.scratchCtx = scratch.ctx;
  state.context = req.context;
  const names = state.snapshot.dict.names;
  const c = scratch.ctx >>> 2;
  const hasCtx = req.contextualTuples.length > 0;
  const obj = state.node(req.object, true);
  const [un, ur] = splitUser(req.user);
  const subj = state.node(un, hasCtx || ur !== undefined);
  const sr = ur === undefined ? 0 : (names.get(ur) ?? NONE - 1) + 1;
  let wild = NONE;
  if (ur === undefined && !un.endsWith(':*')) {
    const w = un.slice(0, un.indexOf(':')) + ':*';
    wild = hasCtx ? state.node(w, true) : (state.snapshot.nodeId(w) ?? NONE);
  }
  const recs: number[][] = [];
  for (const t of req.contextualTuples.slice(0, MAX_CTX)) {
    const [tn, tr] = splitUser(t.user);
    const rel = names.get(t.relation);
    const tsr = tr === undefined ? 0 : (names.get(tr) ?? -1) + 1;
    if (rel === undefined || tsr < 0) continue; // names the model does not know cannot be valid
    let cond = 0;
    if (t.condition) {
      cond = state.snapshot.condCount + state.tempConds.length;
      const nameId = names.get(t.condition.name);
      if (nameId === undefined) continue;
      u32()[(u32()[c + C.TCOND_NAME] ?? 0) / 4 + state.tempConds.length] = nameId;
      state.tempConds.push(t.condition);
    }
    recs.push([state.node(t.object, true), rel, state.node(tn, true), (tsr | (cond << 12)) >>> 0]);
  }
  recs.sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0) || (a[1] ?? 0) - (b[1] ?? 0) || ((a[3] ?? 0) & 0xfff) - ((b[3] ?? 0) & 0xfff) || (a[2] ?? 0) - (b[2] ?? 0));
  const m = u32();
  const rp = (m[c + C.CTX_PTR] ?? 0) >>> 2;
  recs.forEach((r, i) => m.set(r, rp + i * 4));
  m[c + C.CTX_COUNT] = recs.length;
  m[c + C.TCOND_COUNT] = state.tempConds.length;
  m[c + C.OBJECT] = obj;
  m[c + C.RELATION] = names.get(req.relation) ?? NONE;
  m[c + C.SUBJECT] = subj;
  m[c + C.SUBJ_REL] = sr;
  m[c + C.WILD_NODE] = wild;
}
