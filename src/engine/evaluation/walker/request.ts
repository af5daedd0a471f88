// Turns one Check request (strings) into the walker's per-call context in a scratch Region:
// interned ids from the snapshot, temporary ids for strings the snapshot has never seen, and the
// contextual tuples as sorted records with temporary condition bindings. Owns the scratch layout.

import type { CheckKeyParts } from '../../../domain/tuple.js';
import type { JsonObject, RelationshipCondition, TupleKey } from '../../../domain/types.js';
import {
  C,
  FORM_OBJECT,
  FORM_USERSET,
  FORM_WILDCARD,
  MEMO_SLOT,
  NONE,
  UNSEEN_NODE,
  WILDCARD_BIT,
} from '../../../abi.js';
import type { IndexSnapshot } from '../../../index/store-index.js';
import { Region, u32 } from '../../../index/memory.js';
import type { Program } from './program.js';
import { kindKey } from './reach.js';

const CTX_BYTES = 128;
export const PATH_CAP = 4096;
const MEMO_CAP = 32768;
const MAX_CTX = 128;
const MAX_TEMP = 512;
const PATH_AT = CTX_BYTES;
const MEMO_AT = PATH_AT + PATH_CAP * 8;
const RECS_AT = MEMO_AT + MEMO_CAP * MEMO_SLOT;
const TEMP_AT = RECS_AT + MAX_CTX * 16;
const TCOND_AT = TEMP_AT + MAX_TEMP * 4;
const SCRATCH_BYTES = TCOND_AT + MAX_CTX * 4;

/**
 * What preparing a request reads of a snapshot: the `IndexSnapshot`, or an HTTP thread's view of
 * one published on the threads' board (`src/http/threads/local-check.ts`).
 */
export interface WalkView {
  /** Address of the walker's snapshot header. */
  readonly header: number;
  readonly nodeCount: number;
  readonly condCount: number;
  readonly dict: {
    readonly names: ReadonlyMap<string, number>;
    readonly nameList: readonly string[];
    readonly nodeList: readonly string[];
    readonly conds: readonly (RelationshipCondition | undefined)[];
  };
  nodeId(s: string): number | undefined;
  nameId(s: string): number | undefined;
  wildcardOf(type: number): number;
  nodeType(n: number): number;
}

/** One thread-call scratch area: context header, path stack, memo, contextual records. */
export class Scratch {
  /** The area's own Region, undefined for one allocated by another thread (`at`). */
  readonly region: Region | undefined;
  readonly ctx: number;
  /** A new area, or (`at`) one the main thread allocated for a thread that cannot allocate. */
  constructor(at?: number) {
    this.region = at === undefined ? new Region(SCRATCH_BYTES) : undefined;
    this.ctx = this.region?.ptr ?? (at as number);
  }
  /**
   * Writes the fixed words (areas, snapshot, program, limit, the request's instant `now` in ms:
   * stored tuples expired at it grant nothing) and clears the per-request parts.
   */
  bind(snapshot: WalkView, program: Pick<Program, 'ptr'>, depthLimit: number, now = 0): void {
    const m = u32();
    const c = this.ctx >>> 2;
    const p = this.ctx;
    m[c + C.DEPTH_LIMIT] = depthLimit;
    m[c + C.NOW_LO] = now % 2 ** 32;
    m[c + C.NOW_HI] = Math.floor(now / 2 ** 32);
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
  /** The key's parts as validation found them (`validateCheckKey`); absent → split here (`userParts`). */
  readonly parts?: UserParts | undefined;
}

/** What preparation reads of the user: CheckKeyParts without the object's type. */
type UserParts = Pick<CheckKeyParts, 'userBase' | 'userType' | 'userRelation' | 'userWildcard'>;

/**
 * The user's parts of a request that did not come through validation (list confirmations, tests):
 * split as the walker always did (on the last `#`, the type before the first `:`), so a malformed
 * string still maps to ids no stored tuple has.
 */
function userParts(user: string): UserParts {
  const hash = user.lastIndexOf('#');
  const userBase = hash === -1 ? user : user.slice(0, hash);
  return {
    userBase,
    userType: userBase.slice(0, userBase.indexOf(':')),
    userRelation: hash === -1 ? undefined : user.slice(hash + 1),
    userWildcard: userBase.endsWith(':*'),
  };
}

/**
 * Host-side state of one call: temporary ids and contextual condition bindings. One instance per
 * thread is reused across calls (`reset`), so a plain check allocates nothing here.
 */
export class CallState {
  snapshot!: WalkView;
  context: JsonObject | undefined;
  readonly tempNodes: string[] = [];
  private readonly tempIds = new Map<string, number>();
  readonly tempConds: RelationshipCondition[] = [];
  private ctxWord = 0;

  reset(snapshot: WalkView, scratch: Scratch, context: JsonObject | undefined): void {
    this.snapshot = snapshot;
    this.context = context;
    this.ctxWord = scratch.ctx >>> 2;
    if (this.tempNodes.length > 0) {
      this.tempNodes.length = 0;
      this.tempIds.clear();
    }
    // Setting an array's length is a runtime call even when it does not change.
    if (this.tempConds.length > 0) this.tempConds.length = 0;
  }

  /** Node id of `s`, a temporary id past the snapshot's nodes when unseen (`intern`), else UNSEEN_NODE. */
  node(s: string, intern: boolean): number {
    const id = this.snapshot.nodeId(s);
    if (id !== undefined) return id;
    if (this.tempNodes.length > 0) {
      const t = this.tempIds.get(s);
      if (t !== undefined) return t;
    }
    if (!intern) return UNSEEN_NODE;
    if (this.tempNodes.length >= MAX_TEMP) throw new RangeError('latch: too many unseen strings in one request');
    const nid = this.snapshot.nodeCount + this.tempNodes.length;
    const colon = s.indexOf(':');
    const type = this.snapshot.dict.names.get(s.slice(0, colon)) ?? 0x7fffffff;
    const m = u32();
    m[(m[this.ctxWord + C.TEMP_TYPES] ?? 0) / 4 + this.tempNodes.length] =
      s.length === colon + 2 && s.endsWith('*') ? (type | WILDCARD_BIT) >>> 0 : type;
    this.tempNodes.push(s);
    this.tempIds.set(s, nid);
    m[this.ctxWord + C.TEMP_COUNT] = this.tempNodes.length;
    return nid;
  }

  nodeString(id: number): string {
    return id < this.snapshot.nodeCount
      ? (this.snapshot.dict.nodeList[id] ?? '')
      : (this.tempNodes[id - this.snapshot.nodeCount] ?? '');
  }

  /** The stored or contextual condition binding of a walker condition id. */
  binding(cond: number): RelationshipCondition | undefined {
    return cond < this.snapshot.condCount
      ? this.snapshot.dict.conds[cond]
      : this.tempConds[cond - this.snapshot.condCount];
  }
}

/**
 * Node of `type(subject):*` for a plain object subject, NONE for usersets and wildcards. An unseen
 * subject's comes from its type's name id (`wildcardOf` keeps it per snapshot): no `T:*` string.
 */
function wildcardFor(state: CallState, u: UserParts, subj: number, intern: boolean): number {
  if (u.userRelation !== undefined || u.userWildcard) return NONE;
  const snap = state.snapshot;
  if (intern) return state.node(`${u.userType}:*`, true);
  if (subj < snap.nodeCount) return snap.wildcardOf(snap.nodeType(subj));
  // A `T:*` node interns its type's name first: no name id, no such node.
  const type = snap.nameId(u.userType);
  return type === undefined ? NONE : snap.wildcardOf(type);
}

/** The program's dense subject-kind index of a user string (reach.ts), NONE when unknown. */
function subjectKind(program: Program, names: ReadonlyMap<string, number>, user: string): number {
  return kindOf(program, names, userParts(user));
}

function kindOf(program: Pick<Program, 'kinds'>, names: ReadonlyMap<string, number>, u: UserParts): number {
  const type = names.get(u.userType);
  if (type === undefined) return NONE;
  let form = u.userWildcard ? FORM_WILDCARD : FORM_OBJECT;
  if (u.userRelation !== undefined) {
    const r = names.get(u.userRelation);
    if (r === undefined) return NONE;
    form = FORM_USERSET + r;
  }
  return program.kinds.get(kindKey(type, form)) ?? NONE;
}

/**
 * Encodes one query without contextual tuples as a QUERY_WORDS record at `out[at..]`; false when
 * the object is unknown to the snapshot (the caller answers it inline: it needs a temporary id).
 */
export function encodeQuery(
  snap: IndexSnapshot,
  program: Program,
  object: string,
  relation: string,
  user: string,
  out: Uint32Array,
  at: number,
): boolean {
  const obj = snap.nodeId(object);
  if (obj === undefined) return false;
  const names = snap.dict.names;
  const hash = user.lastIndexOf('#');
  const un = hash === -1 ? user : user.slice(0, hash);
  const subj = snap.nodeId(un) ?? UNSEEN_NODE;
  out[at] = obj;
  out[at + 1] = names.get(relation) ?? NONE;
  out[at + 2] = subj;
  out[at + 3] = hash === -1 ? 0 : (names.get(user.slice(hash + 1)) ?? NONE - 1) + 1;
  out[at + 4] =
    hash !== -1 || un.endsWith(':*')
      ? NONE
      : subj !== UNSEEN_NODE
        ? snap.wildcardOf(snap.nodeType(subj))
        : (snap.nodeId(un.slice(0, un.indexOf(':')) + ':*') ?? NONE);
  // A known plain subject's type comes from its node: no string slicing on the hot path.
  out[at + 5] =
    hash === -1 && subj !== UNSEEN_NODE
      ? (program.kinds.get(kindKey(snap.nodeType(subj), un.endsWith(':*') ? FORM_WILDCARD : FORM_OBJECT)) ?? NONE)
      : subjectKind(program, names, user);
  return true;
}

/**
 * Writes the query and the contextual tuples of `req` into `scratch` (already bound) and resets
 * `state` for it. Contextual records are sorted (obj, rel, subjRel, subj) like overlay records.
 */
export function prepare(scratch: Scratch, state: CallState, req: CheckRequest, program: Pick<Program, 'kinds'>): void {
  state.reset(state.snapshot, scratch, req.context);
  const snap = state.snapshot;
  const names = snap.dict.names;
  const c = scratch.ctx >>> 2;
  const hasCtx = req.contextualTuples.length > 0;
  const u = req.parts ?? userParts(req.user);
  const userset = u.userRelation !== undefined;
  const obj = state.node(req.object, true);
  const subj = state.node(u.userBase, hasCtx || userset);
  const sr = userset ? (names.get(u.userRelation) ?? NONE - 1) + 1 : 0;
  const wild = wildcardFor(state, u, subj, hasCtx);
  const m = u32();
  m[c + C.CTX_COUNT] = hasCtx ? writeContextual(state, c, req.contextualTuples) : 0;
  m[c + C.TCOND_COUNT] = state.tempConds.length;
  m[c + C.OBJECT] = obj;
  m[c + C.RELATION] = names.get(req.relation) ?? NONE;
  m[c + C.SUBJECT] = subj;
  m[c + C.SUBJ_REL] = sr;
  m[c + C.WILD_NODE] = wild;
  // A known plain subject's type comes from its node, as in encodeQuery: no string lookup.
  m[c + C.SUBJ_KIND] =
    !userset && subj < snap.nodeCount
      ? (program.kinds.get(kindKey(snap.nodeType(subj), u.userWildcard ? FORM_WILDCARD : FORM_OBJECT)) ?? NONE)
      : kindOf(program, names, u);
}

function writeContextual(state: CallState, c: number, tuples: readonly TupleKey[]): number {
  const names = state.snapshot.dict.names;
  const recs: number[][] = [];
  for (const t of tuples.slice(0, MAX_CTX)) {
    const hash = t.user.lastIndexOf('#');
    const rel = names.get(t.relation);
    const tsr = hash === -1 ? 0 : (names.get(t.user.slice(hash + 1)) ?? -1) + 1;
    if (rel === undefined || tsr < 0) continue; // names the model does not know cannot be valid
    let cond = 0;
    if (t.condition) {
      const nameId = names.get(t.condition.name);
      if (nameId === undefined) continue;
      cond = state.snapshot.condCount + state.tempConds.length;
      const m = u32();
      m[(m[c + C.TCOND_NAME] ?? 0) / 4 + state.tempConds.length] = nameId;
      state.tempConds.push(t.condition);
    }
    const subj = state.node(hash === -1 ? t.user : t.user.slice(0, hash), true);
    recs.push([state.node(t.object, true), rel, subj, (tsr | (cond << 12)) >>> 0]);
  }
  recs.sort(
    (a, b) =>
      (a[0] ?? 0) - (b[0] ?? 0) ||
      (a[1] ?? 0) - (b[1] ?? 0) ||
      ((a[3] ?? 0) & 0xfff) - ((b[3] ?? 0) & 0xfff) ||
      (a[2] ?? 0) - (b[2] ?? 0),
  );
  const m = u32();
  const rp = (m[c + C.CTX_PTR] ?? 0) >>> 2;
  recs.forEach((r, i) => m.set(r, rp + i * 4));
  return recs.length;
}
