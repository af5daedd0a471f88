// Bulk Check on interned strings (`Latch.checkIds`): the caller's string indices are resolved once
// per (string table, walker program) into walker ids and validity states, so a check that repeats
// known strings costs a few typed-array reads plus the walk, with no string or object per check.
// Anything not resolved to a valid record of this snapshot (a malformed or unknown key, an object
// the snapshot has never seen) takes Check's own path with its strings, so every answer and every
// error is exactly what Check would give for that tuple key.
//
// Example: table ['doc:1', 'viewer', 'user:anne'], triples [0,1,2] → outcomes [CHECK_ALLOWED]
// when `doc:1#viewer@user:anne` is stored; a second call with the same indices reads no string.

import { parseObject } from '../../domain/tuple.js';
import type { JsonObject } from '../../domain/types.js';
import { AppError, toAppError } from '../../errors.js';
import { NONE, QUERY_WORDS, UNSEEN_NODE } from '../../abi.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import type { CompiledModel } from '../../model/types.js';
import type { StoreIndexes } from '../state/store-indexes.js';
import type { ModelCache } from '../state/model-cache.js';
import type { EngineParts } from './parts.js';
import { assertKnownStore, freshIndex } from './request-steps.js';
import { validateCheckKey, validateRequestContext, validateSubject } from './validate-request.js';
import {
  CHECK_ALLOWED,
  CHECK_DENIED,
  CHECK_ERROR,
  type CheckIdsInput,
  type CheckIdsResult,
  type StringTable,
} from '../contract.js';
import type { WalkerChecker, CheckOutcome } from '../evaluation/walker/checker.js';
import { programFor, type Program } from '../evaluation/walker/program.js';
import { encodeQuery } from '../evaluation/walker/request.js';

const UNRESOLVED = 0;
/** Valid for Check and known to the snapshot: the cached words are the walker's record. */
const FAST = 1;
/** Invalid for this model, or unknown to the snapshot: the check runs on Check's string path. */
const SLOW = 2;

/** Walker words of a user string: subject node, subject relation, wildcard node, subject kind. */
const USER_WORDS = 4;
const EMPTY: readonly never[] = Object.freeze([]);

/** What one string table's indices resolve to under one program (model × store dictionary). */
class Resolution {
  /** The snapshot node count the entries were resolved against (nodes only ever get added). */
  nodeCount = -1;
  objState = new Uint8Array(0);
  objNode = new Uint32Array(0);
  /** Type name id of a FAST object (for the type × relation validity). */
  objType = new Uint32Array(0);
  relState = new Uint8Array(0);
  relName = new Uint32Array(0);
  /** Per relation index: the object type it was last checked against, and whether it is defined there. */
  relLastType = new Uint32Array(0);
  relLastOk = new Uint8Array(0);
  userState = new Uint8Array(0);
  userWords = new Uint32Array(0);
  /** (type name id × 2^16 + relation name id) → the relation is defined on the type. */
  readonly pairs = new Map<number, boolean>();
  /** Entries that a later snapshot (more nodes) may resolve differently: reset when it comes. */
  volatileObjs: number[] = [];
  volatileUsers: number[] = [];

  /** Makes room for `n` indices; new entries are UNRESOLVED. */
  grow(n: number): void {
    if (n <= this.objState.length) return;
    const cap = Math.max(n, this.objState.length * 2, 256);
    const grown = <T extends Uint8Array | Uint32Array>(a: T, k: number, make: (len: number) => T): T => {
      const b = make(cap * k);
      b.set(a);
      return b;
    };
    this.objState = grown(this.objState, 1, (l) => new Uint8Array(l));
    this.objNode = grown(this.objNode, 1, (l) => new Uint32Array(l));
    this.objType = grown(this.objType, 1, (l) => new Uint32Array(l));
    this.relState = grown(this.relState, 1, (l) => new Uint8Array(l));
    this.relName = grown(this.relName, 1, (l) => new Uint32Array(l));
    const lastType = new Uint32Array(cap).fill(NONE);
    lastType.set(this.relLastType);
    this.relLastType = lastType;
    this.relLastOk = grown(this.relLastOk, 1, (l) => new Uint8Array(l));
    this.userState = grown(this.userState, 1, (l) => new Uint8Array(l));
    this.userWords = grown(this.userWords, USER_WORDS, (l) => new Uint32Array(l));
  }

  /** Brings the entries to `snap`: a larger node count re-resolves the volatile ones; anything else all. */
  sync(snap: IndexSnapshot): void {
    if (snap.nodeCount === this.nodeCount) return;
    if (snap.nodeCount > this.nodeCount && this.nodeCount >= 0) {
      for (const o of this.volatileObjs) this.objState[o] = UNRESOLVED;
      for (const u of this.volatileUsers) this.userState[u] = UNRESOLVED;
    } else {
      this.objState.fill(UNRESOLVED);
      this.userState.fill(UNRESOLVED);
    }
    this.volatileObjs = [];
    this.volatileUsers = [];
    this.nodeCount = snap.nodeCount;
  }
}

const resolutions = new WeakMap<StringTable, WeakMap<Program, Resolution>>();

function resolutionOf(table: StringTable, program: Program): Resolution {
  let byProgram = resolutions.get(table);
  if (!byProgram) resolutions.set(table, (byProgram = new WeakMap()));
  let r = byProgram.get(program);
  if (!r) byProgram.set(program, (r = new Resolution()));
  return r;
}

/** Reusable u32 buffers (query records, index maps): no megabyte allocations per call. */
const spare: Uint32Array[] = [];

function acquire(words: number): Uint32Array {
  for (let i = 0; i < spare.length; i++) {
    const b = spare[i] as Uint32Array;
    if (b.length >= words) {
      spare.splice(i, 1);
      return b;
    }
  }
  return new Uint32Array(Math.max(words, 1024));
}

function release(b: Uint32Array): void {
  if (spare.length < 8) spare.push(b);
}

function resolveObject(r: Resolution, snap: IndexSnapshot, model: CompiledModel, o: number, s: string): number {
  const parsed = parseObject(s);
  let state = SLOW;
  if (parsed && parsed.id !== '*' && model.types.has(parsed.type)) {
    const node = snap.nodeId(s);
    const type = snap.dict.names.get(parsed.type);
    if (node === undefined || type === undefined) r.volatileObjs.push(o);
    else {
      r.objNode[o] = node;
      r.objType[o] = type;
      state = FAST;
    }
  }
  r.objState[o] = state;
  return state;
}

function resolveRelation(r: Resolution, snap: IndexSnapshot, rel: number, s: string): number {
  const name = snap.dict.names.get(s);
  r.relName[rel] = name ?? NONE;
  r.relState[rel] = name === undefined ? SLOW : FAST;
  return r.relState[rel] as number;
}

/** The relation is defined on the type (validateObjectRelation's rule, cached per name pair). */
function pairValid(r: Resolution, snap: IndexSnapshot, model: CompiledModel, type: number, rel: number): boolean {
  const key = type * 65536 + rel;
  let ok = r.pairs.get(key);
  if (ok === undefined) {
    const names = snap.dict.nameList;
    ok = model.types.get(names[type] ?? '')?.relations.has(names[rel] ?? '') ?? false;
    r.pairs.set(key, ok);
  }
  return ok;
}

/** Outcome byte and error of one check through Check's string path. */
function slowCheck(
  checker: WalkerChecker,
  snap: IndexSnapshot,
  model: CompiledModel,
  key: { object: string; relation: string; user: string },
  context: JsonObject | undefined,
  deadline: number,
  now: number,
): CheckOutcome {
  try {
    validateCheckKey(model, key);
  } catch (err) {
    return { error: toAppError(err) };
  }
  return checker.checkInline(
    snap,
    model,
    { object: key.object, relation: key.relation, user: key.user, contextualTuples: EMPTY, context },
    deadline,
    now,
  );
}

/**
 * The store, its index at the asked freshness, then every check of the request against one
 * snapshot at one instant. Past `checkDeadlineMs` (docs/reference/decisions.md D8) the checks not yet answered answer
 * throttled_timeout_error.
 */
export async function checkIds(e: EngineParts, input: CheckIdsInput): Promise<CheckIdsResult> {
  await assertKnownStore(e, input.storeId);
  const deadline = Date.now() + e.config.checkDeadlineMs;
  await freshIndex(e, input, deadline);
  return checkAll(e.models, e.indexes, e.checker, input, deadline);
}

/** `deadline` (`Date.now()` ms, D8): checks it cuts short answer throttled_timeout_error. */
async function checkAll(
  models: ModelCache,
  indexes: StoreIndexes,
  checker: WalkerChecker,
  input: CheckIdsInput,
  deadline: number,
): Promise<CheckIdsResult> {
  const model = await models.resolve(input.storeId, input.modelId);
  validateRequestContext(input.context);
  const snap = (await indexes.get(input.storeId)).snapshot();
  // One instant for every check of the request, fast and slow path alike (tuple expiry).
  const now = checker.instant(snap);
  // From here to the checker call everything is synchronous: the resolution matches `snap`.
  const program = programFor(model, snap.dict);
  const r = resolutionOf(input.table, program);
  const strings = input.table.strings;
  r.grow(strings.length);
  r.sync(snap);
  const { triples, outcomes, errors, context } = input;
  const n = Math.floor(triples.length / 3);
  const records = acquire(n * QUERY_WORDS);
  const index = acquire(n);
  const slow: number[] = [];
  const answered = errors.size > 0;
  let k = 0;
  try {
    for (let i = 0; i < n; i++) {
      if (answered && outcomes[i] === CHECK_ERROR && errors.has(i)) continue;
      const o = triples[3 * i] as number;
      const rel = triples[3 * i + 1] as number;
      const u = triples[3 * i + 2] as number;
      if (o >= strings.length || rel >= strings.length || u >= strings.length) {
        outcomes[i] = CHECK_ERROR;
        errors.set(i, new AppError('validation_error', `check ${i} names a string id that was never declared`));
        continue;
      }
      const os = r.objState[o] || resolveObject(r, snap, model, o, strings[o] as string);
      const rs = r.relState[rel] || resolveRelation(r, snap, rel, strings[rel] as string);
      if (os !== FAST || rs !== FAST) {
        slow.push(i);
        continue;
      }
      const type = r.objType[o] as number;
      if (r.relLastType[rel] !== type) {
        r.relLastType[rel] = type;
        r.relLastOk[rel] = pairValid(r, snap, model, type, r.relName[rel] as number) ? 1 : 0;
      }
      if (r.relLastOk[rel] === 0) {
        slow.push(i);
        continue;
      }
      let us = r.userState[u] as number;
      const at = k * QUERY_WORDS;
      if (us === UNRESOLVED) {
        // The user's words are encodeQuery's own (they depend on the user string alone).
        const user = strings[u] as string;
        us = SLOW;
        try {
          validateSubject(model, user);
          encodeQuery(snap, program, strings[o] as string, strings[rel] as string, user, records, at);
          r.userWords.set(records.subarray(at + 2, at + 2 + USER_WORDS), u * USER_WORDS);
          us = FAST;
          const w = r.userWords;
          if (w[u * USER_WORDS] === UNSEEN_NODE || (w[u * USER_WORDS + 2] === NONE && w[u * USER_WORDS + 1] === 0))
            r.volatileUsers.push(u);
        } catch {
          // validateSubject's error is reported by the string path with Check's exact message.
        }
        r.userState[u] = us;
      }
      if (us !== FAST) {
        slow.push(i);
        continue;
      }
      const w = r.userWords;
      const uw = u * USER_WORDS;
      records[at] = r.objNode[o] as number;
      records[at + 1] = r.relName[rel] as number;
      records[at + 2] = w[uw] as number;
      records[at + 3] = w[uw + 1] as number;
      records[at + 4] = w[uw + 2] as number;
      records[at + 5] = w[uw + 3] as number;
      index[k++] = i;
    }
    const fast =
      k > 0 ? await checker.checkIds(snap, model, records.subarray(0, k * QUERY_WORDS), context, deadline, now) : [];
    for (let j = 0; j < k; j++) record(outcomes, errors, index[j] as number, fast[j] as CheckOutcome);
  } finally {
    release(records);
    release(index);
  }
  for (const i of slow) {
    const key = {
      object: strings[triples[3 * i] as number] as string,
      relation: strings[triples[3 * i + 1] as number] as string,
      user: strings[triples[3 * i + 2] as number] as string,
    };
    record(outcomes, errors, i, slowCheck(checker, snap, model, key, context, deadline, now));
  }
  return { modelId: model.id, revision: snap.revision, instant: now };
}

function record(outcomes: Uint8Array, errors: Map<number, AppError>, i: number, o: CheckOutcome): void {
  if ('error' in o) {
    outcomes[i] = CHECK_ERROR;
    errors.set(i, o.error);
  } else outcomes[i] = o.allowed ? CHECK_ALLOWED : CHECK_DENIED;
}
