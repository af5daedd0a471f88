// One permission index on this node: its definition, its materialised triples (per
// `object#relation`, the concrete users the relation resolves to under the assigned model), the
// build that fills them (BUILDING → ACTIVE, or FAILED with a reason) and the incremental
// maintenance that keeps them exact, revision by revision, after the Write was acknowledged and
// in bounded slices (the manager steps it), with a bounded ring of the resulting INSERT/DELETE
// events. Event ids are (revision, position in the revision's sorted deltas), so
// every node that applies the same revisions emits the same ids.
// Example: after `doc:1#viewer@user:anne` at revision 7 on an index of doc#viewer, the ring ends
// with {revision: 7, position: 0, operation: 'INSERT', user: 'user:anne', relation: 'viewer', object: 'doc:1'}.
//
// Readers of the whole set (ReadExpansions without `from`) iterate the live maps through a
// `SetSnapshot`, never a copy: while any snapshot is open, maintenance replaces a key's user set
// with a modified clone instead of changing it in place and records the set it replaced in an undo
// log keyed by revision, and keeps emptied keys as empty sets (a deleted and re-added key would
// move to the end of the map's order and be visited twice). A snapshot at revision R reads key K
// as the first undo entry of K after R, else the live set. The log holds only what changed while
// snapshots were open, and is trimmed as they close.

import type { TupleKey } from '../../domain/types.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import type { TupleView } from '../../index/types.js';
import type { CompiledModel } from '../../model/types.js';
import type { PermissionIndexRecord } from '../../storage/types.js';
import { admitsWildcard } from '../evaluation/list/list-users.js';
import { isValidAtReadTime } from '../evaluation/semantics/validity.js';
import type { PendingRevision, RevisionView, RevisionViews } from './backlog.js';
import { confirmAt, confirmOnWalker, type Confirmation } from './confirm.js';
import { indexGraph, type IndexGraph } from './graph.js';
import { candidateKeys, candidateUsers, usersOf } from './maintain.js';
import { EventRing } from './event-ring.js';
import { RevisionDeltas } from './revision.js';
import { DEFAULT_PERMISSION_INDEX_LIMITS } from '../config.js';
import type { EventPoint, ExpansionEvent, PermissionIndexLimits, PermissionIndexStatus } from '../contract.js';

/** The users of one key before a revision changed them (`undefined`: the key had none). */
interface UndoEntry {
  readonly revision: number;
  readonly users: ReadonlySet<string> | undefined;
}

/** A consistent read of the whole set at `revision`; `close` it (streams do, in a finally). */
export interface SetSnapshot {
  readonly revision: number;
  /** Every triple at `revision` as `[user, relation, object]`, read lazily from the live maps. */
  triples(): Generator<[string, string, string]>;
  close(): void;
}

const NO_USERS: ReadonlySet<string> = new Set();

/** A new key's grants up to this many users are copied in one step (between two yields). */
const GRANT_AT_ONCE = 4096;

/** Revisions whose time of application is kept (a stream's freshness event for each). */
const APPLIED_TIMES = 1024;

/** The kept closures hold at most this share of `maxTriples` users (1M at the default 50M). */
const CLOSURE_SHARE = 50;

export class PermissionIndex {
  status: PermissionIndexStatus = 'BUILDING';
  reason: string | undefined;
  readonly graph: IndexGraph;
  /** `object#relation` → the concrete users it resolves to. */
  private readonly sets = new Map<string, Set<string>>();
  /** Keys listed for the build and not built yet: maintenance skips them (the build reads a later snapshot). */
  private pending: string[] | undefined;
  private pendingAt = 0;
  private readonly pendingSet = new Set<string>();
  /** The last events (for streams and `from`), in columns: keeping one allocates nothing. */
  private readonly ring: EventRing;
  triples = 0;
  ingestedChanges = 0;
  eventsCount = 0;
  /** The last revision maintained: the index is exactly the set at it. */
  revision = 0;
  /** The revision being maintained (its differences are half applied), if any. */
  applying: number | undefined;
  freshness = Date.now();
  /** When the last APPLIED_TIMES revisions were applied: [revision, Date.now()] pairs, a ring. */
  private readonly appliedTimes = new Float64Array(2 * APPLIED_TIMES);
  private appliedNext = 0;
  updatedAt = Date.now();
  private buildStarted = 0;
  /** How long the build took (ms), once it ended. */
  buildMs: number | undefined;
  private readonly listeners = new Set<() => void>();
  deleted = false;
  /** Open snapshots: their revisions, one entry each (a multiset as a count map). */
  private readonly readers = new Map<number, number>();
  private readerCount = 0;
  /** key → the sets it had before each revision that changed it while readers were open, oldest first. */
  private readonly undo = new Map<string, UndoEntry[]>();
  /** Keys emptied while readers were open: kept as empty sets until the last reader closes. */
  private readonly emptied = new Set<string>();
  /** Keys whose set this revision already cloned (it may then change in place: no reader holds it). */
  private readonly owned = new Set<string>();

  /**
   * The candidate users of userset nodes (`group:eng#member` → its concrete users) as they are at
   * `revision`, kept across revisions (the group-membership closure, as Zanzibar's Leopard keeps
   * it): maintaining a revision brings them to it or drops them (`deltas`). At most
   * maxTriples / CLOSURE_SHARE users held; past that they are all dropped.
   */
  private readonly closures = new Map<string, Set<string>>();
  private closureUsers = 0;

  /** Model, depth and wildcard types for confirming candidate pairs (./confirm.ts). */
  private readonly confirmation: Confirmation;

  constructor(
    readonly record: PermissionIndexRecord,
    readonly model: CompiledModel,
    private readonly limits: PermissionIndexLimits = DEFAULT_PERMISSION_INDEX_LIMITS,
  ) {
    this.graph = indexGraph(model, record.relations);
    this.ring = new EventRing(limits.ringSize);
    this.expansionKey = `${model.id}|${this.graph.userTypes.join(',')}|`;
    this.confirmation = {
      model,
      resolveDepth: limits.resolveDepth,
      wildcardTypes: new Set(this.graph.userTypes.filter((t) => admitsWildcard(model, t))),
    };
  }

  /** Prefix of this index's entries in a revision's shared expansions. */
  private readonly expansionKey: string;

  get expansionsCount(): number {
    return this.triples;
  }

  /** Starts the build over `snap`: lists every object of the indexed types it knows. */
  startBuild(snap: IndexSnapshot): void {
    const keys: string[] = [];
    const byType = new Map<string, string[]>();
    for (const r of this.record.relations)
      byType.set(r.object_type, [...(byType.get(r.object_type) ?? []), r.relation]);
    const nodes = snap.dict.nodeList;
    for (let i = 0; i < snap.nodeCount; i++) {
      const s = nodes[i] as string;
      const colon = s.indexOf(':');
      const rels = byType.get(s.slice(0, colon));
      if (!rels || s.endsWith(':*')) continue;
      for (const r of rels) keys.push(`${s}#${r}`);
    }
    this.pending = keys;
    for (const k of keys) this.pendingSet.add(k);
    this.revision = snap.revision;
    this.buildStarted = Date.now();
  }

  /**
   * Builds pending keys over `snap` (the store's latest snapshot) for about `budgetMs`, once the
   * index has maintained every revision up to it; true when the build is over (ACTIVE or FAILED).
   */
  buildStep(snap: IndexSnapshot, budgetMs: number): boolean {
    if (this.status !== 'BUILDING' || !this.pending) return true;
    // Keys are built only at the revision the index has maintained (the backlog first).
    if (snap.revision !== this.revision || this.applying !== undefined) return false;
    const until = performance.now() + budgetMs;
    try {
      while (this.pendingAt < this.pending.length) {
        const key = this.pending[this.pendingAt++] as string;
        this.pendingSet.delete(key);
        const hash = key.lastIndexOf('#');
        const object = key.slice(0, hash);
        const relation = key.slice(hash + 1);
        const candidates = new Set<string>();
        usersOf(this.graph, this.model, snap, object, relation, candidates);
        const users = new Set<string>();
        for (const user of candidates)
          if (confirmOnWalker(this.confirmation, snap, object, relation, user)) users.add(user);
        if (users.size > 0) {
          this.sets.set(key, users);
          this.triples += users.size;
        }
        if (this.triples > this.limits.maxTriples) return this.fail(`more than ${this.limits.maxTriples} triples`);
        if (performance.now() >= until) break;
      }
      if (Date.now() - this.buildStarted > this.limits.buildMs)
        return this.fail(`the build took longer than ${this.limits.buildMs} ms`);
    } catch (err) {
      return this.fail(`the build failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (this.pendingAt < this.pending.length) return false;
    this.pending = undefined;
    this.status = 'ACTIVE';
    this.ring.reset({ revision: this.revision, position: Infinity });
    this.wake();
    return true;
  }

  fail(reason: string): true {
    this.status = 'FAILED';
    this.reason = reason;
    this.sets.clear();
    this.undo.clear();
    this.emptied.clear();
    this.pending = undefined;
    this.pendingSet.clear();
    this.dropClosures();
    this.triples = 0;
    this.wake();
    return true;
  }

  /**
   * Maintains one revision, after every earlier one: re-checks (or, for a write in a monotone
   * graph, grants) every candidate pair at that revision and numbers the differences as its
   * events. A generator the manager steps in bounded slices of event-loop time: `views` holds the
   * store's tuples just before and at the revision, renewed (over the latest snapshot) before
   * each step, so nothing here keeps a snapshot across a yield. Streams take no initial set while
   * a revision is half applied (`applying`).
   */
  *maintain(p: PendingRevision, views: RevisionViews): Generator<void, void> {
    this.applying = p.revision;
    this.owned.clear();
    try {
      if (this.status !== 'FAILED') {
        const d = new RevisionDeltas();
        yield* this.deltas(p, views, d);
        if (this.triples > this.limits.maxTriples) this.fail(`more than ${this.limits.maxTriples} triples`);
        else if (d.count > 0) yield* this.append(p.revision, d);
      }
    } catch (err) {
      this.fail(`maintenance failed at revision ${p.revision}: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.applying = undefined;
    this.revision = p.revision;
    this.freshness = Date.now();
    const slot = 2 * (this.appliedNext++ % APPLIED_TIMES);
    this.appliedTimes[slot] = p.revision;
    this.appliedTimes[slot + 1] = this.freshness;
    this.wake();
  }

  /**
   * When the index applied `revision` (ms since the epoch); for a revision older than the kept
   * times, the latest one (later than the truth: a lag read from it is never understated).
   */
  appliedAt(revision: number): number {
    for (let i = 0; i < APPLIED_TIMES && i < this.appliedNext; i++) {
      const slot = 2 * ((this.appliedNext - 1 - i) % APPLIED_TIMES);
      const r = this.appliedTimes[slot] as number;
      if (r === revision) return this.appliedTimes[slot + 1] as number;
      if (r < revision) break;
    }
    return this.freshness;
  }

  /**
   * The differences of revision `p`. Deletes first, over the store and the kept closures as they
   * were before it; then every write's keys, and the kept closures are brought to the revision
   * (below); then the writes' candidates are read over the store and the closures at the revision.
   * Each change's walk names the closures it can alter. A closure a delete, a userset write, a
   * write under `but not` or `and`, or a tupleset edge can alter is dropped; a closure that a
   * granting write of a concrete user reaches gains that user (a monotone graph: the users at the
   * revision are the ones before it and the ones the writes pass up).
   */
  private *deltas(p: PendingRevision, views: RevisionViews, d: RevisionDeltas): Generator<void> {
    const checked = new Set<string>();
    const drop = new Set<string>();
    const touched = new Map<string, number>();
    for (const t of p.deleted) {
      touched.clear();
      const keys = this.keysOf(t, views.before, true, touched);
      for (const node of touched.keys()) drop.add(node);
      if (keys) yield* this.differences(t, keys, true, views, checked, d, p.expansions);
    }
    const written: (Set<string> | undefined)[] = [];
    const gains: { readonly nodes: string[]; readonly users: ReadonlySet<string> }[] = [];
    for (const t of p.written) {
      touched.clear();
      written.push(this.keysOf(t, views.after, false, touched));
      if (touched.size === 0 || this.closures.size === 0) continue;
      const plain = this.grants(t, false) && !t.user.includes('#');
      const nodes: string[] = [];
      for (const [node, level] of touched) {
        if (plain && level === 2) nodes.push(node);
        else drop.add(node);
      }
      if (nodes.length === 0) continue;
      const users = new Set<string>();
      candidateUsers(this.graph, this.model, views.after, t, users);
      gains.push({ nodes, users });
    }
    this.bringClosures(drop, gains);
    for (let i = 0; i < p.written.length; i++) {
      const keys = written[i];
      if (keys) yield* this.differences(p.written[i] as TupleKey, keys, false, views, checked, d, p.expansions);
    }
  }

  /** A write in a monotone graph grants its user (or members) to every key it reaches: no Check. */
  private grants(t: TupleKey, del: boolean): boolean {
    // A tupleset tuple is re-checked (its keys get another object's users).
    return (
      !del &&
      this.graph.monotone &&
      !this.graph.ttuComputed.has(`${t.object.slice(0, t.object.indexOf(':'))}#${t.relation}`)
    );
  }

  /**
   * The indexed keys (not pending a build) whose users `t` can change in `view`, the view before
   * it for a delete (its paths exist only there), after it for a write; undefined for none. Every
   * node the walk passes is added to `touched`.
   */
  private keysOf(t: TupleKey, view: TupleView, del: boolean, touched: Map<string, number>): Set<string> | undefined {
    const node = `${t.object.slice(0, t.object.indexOf(':'))}#${t.relation}`;
    if (!this.graph.reach.has(node)) return undefined;
    this.ingestedChanges++;
    if (!isValidAtReadTime(this.model, t)) return undefined; // Check ignores it: it changes nothing
    const keys = new Set<string>();
    candidateKeys(this.graph, this.model, view, t, keys, this.grants(t, del), touched);
    for (const k of keys) if (this.pendingSet.has(k)) keys.delete(k);
    return keys.size > 0 ? keys : undefined;
  }

  /**
   * The differences `t` makes to `keys`. `views` is read afresh after every yield: the step's
   * views are valid only within their slice.
   */
  private *differences(
    t: TupleKey,
    keys: ReadonlySet<string>,
    del: boolean,
    views: RevisionViews,
    checked: Set<string>,
    d: RevisionDeltas,
    memo: Map<string, ReadonlySet<string>>,
  ): Generator<void> {
    let work = 0;
    if (this.graph.hasDifference && t.user.includes('#')) {
      // A userset tuple may close or open a cycle under a `but not`, which changes the answer
      // for every user of the keys above it: each key is re-checked whole (its materialised
      // users and the ones ListUsers finds now).
      for (const key of keys) {
        const users = new Set(this.sets.get(key));
        const hash = key.lastIndexOf('#');
        usersOf(this.graph, this.model, views.after, key.slice(0, hash), key.slice(hash + 1), users);
        for (const user of users) {
          this.recheck(views.after, key, user, checked, d);
          if ((++work & 31) === 0) yield;
        }
      }
      return;
    }
    const users = this.candidates(del ? views.before : views.after, t, del, memo);
    const grant = this.grants(t, del);
    for (const key of keys) {
      if (grant) {
        yield* this.grantAll(key, users, d);
        continue;
      }
      for (const user of users) {
        this.recheck(views.after, key, user, checked, d);
        if ((++work & 255) === 0) yield;
      }
    }
  }

  /**
   * The candidate users of `t`. A userset's members are kept across revisions (`closures`), and
   * expanded at most once per revision and side for every index with the same model and user types.
   */
  private candidates(
    view: TupleView,
    t: TupleKey,
    del: boolean,
    memo: Map<string, ReadonlySet<string>>,
  ): ReadonlySet<string> {
    if (!t.user.includes('#')) {
      const users = new Set<string>();
      candidateUsers(this.graph, this.model, view, t, users);
      return users;
    }
    const kept = this.closures.get(t.user);
    if (kept) return kept;
    const key = `${this.expansionKey}${del ? '-' : '+'}${t.user}`;
    let users = memo.get(key);
    if (!users) {
      const found = new Set<string>();
      candidateUsers(this.graph, this.model, view, t, found);
      memo.set(key, found);
      users = found;
    }
    if (this.closureUsers + users.size > this.limits.maxTriples / CLOSURE_SHARE) this.dropClosures();
    // A copy of its own: the next revisions change it in place, the memo's set is other indexes'.
    this.closures.set(t.user, new Set(users));
    this.closureUsers += users.size;
    return users;
  }

  /** Drops every kept closure. */
  private dropClosures(): void {
    this.closures.clear();
    this.closureUsers = 0;
  }

  /** The kept closures at the revision being maintained: `drop` dropped, `gains` added (see `deltas`). */
  private bringClosures(
    drop: ReadonlySet<string>,
    gains: readonly { readonly nodes: readonly string[]; readonly users: ReadonlySet<string> }[],
  ): void {
    if (this.closures.size === 0) return;
    for (const node of drop) {
      const users = this.closures.get(node);
      if (!users) continue;
      this.closures.delete(node);
      this.closureUsers -= users.size;
    }
    for (const g of gains)
      for (const node of g.nodes) {
        const users = this.closures.get(node);
        if (!users) continue;
        for (const u of g.users) users.add(u);
        this.closureUsers += g.users.size;
      }
  }

  /** The pairs a write grants to `key` (monotone graphs): each added unless it is there. */
  private *grantAll(key: string, users: ReadonlySet<string>, d: RevisionDeltas): Generator<void> {
    // `set`: the key's set once made writable (a clone while snapshots are open); looked up again
    // after every yield.
    let set: Set<string> | undefined;
    let inserts: string[] | undefined;
    let n = 0;
    if (users.size <= GRANT_AT_ONCE && users.size > 0 && this.sets.get(key) === undefined) {
      // A key with no users yet (a new object): every user is granted, the set copied at once
      // (the engine's Set-from-Set copy, not a lookup and an insertion per user).
      this.writable(key); // the undo entry a reader may need
      this.sets.set(key, new Set(users));
      d.insertAll(key, users);
      this.triples += users.size;
      return;
    }
    for (const user of users) {
      if ((set ?? this.sets.get(key))?.has(user) !== true) {
        set ??= this.writable(key);
        set.add(user);
        (inserts ??= d.inserts(key)).push(user);
        this.triples++;
        d.count++;
      }
      if ((++n & 1023) === 0) {
        set = undefined;
        yield;
      }
    }
  }

  /** One candidate pair against `view` (once per revision), diffed with the materialised set. */
  private recheck(view: RevisionView, key: string, user: string, checked: Set<string>, d: RevisionDeltas): void {
    const pair = `${key}@${user}`;
    if (checked.has(pair)) return;
    checked.add(pair);
    const hash = key.lastIndexOf('#');
    const allowed = confirmAt(this.confirmation, view, key.slice(0, hash), key.slice(hash + 1), user);
    const has = this.sets.get(key)?.has(user) ?? false;
    if (allowed && !has) {
      this.writable(key).add(user);
      this.triples++;
      d.add(key, user, true);
    } else if (!allowed && has) {
      const set = this.writable(key);
      set.delete(user);
      if (set.size === 0) {
        if (this.readerCount === 0) this.sets.delete(key);
        else this.emptied.add(key);
      }
      this.triples--;
      d.add(key, user, false);
    }
  }

  /**
   * The key's set, ready to change in place. With snapshots open, the first change of a key in a
   * revision clones it and logs the set it replaces, which stays unchanged for the readers.
   */
  private writable(key: string): Set<string> {
    const set = this.sets.get(key);
    if (this.readerCount === 0 || this.owned.has(key)) {
      if (set) return set;
      const created = new Set<string>();
      this.sets.set(key, created);
      return created;
    }
    this.owned.add(key);
    const entries = this.undo.get(key);
    const entry: UndoEntry = { revision: this.applying ?? this.revision, users: set && set.size > 0 ? set : undefined };
    if (entries) entries.push(entry);
    else this.undo.set(key, [entry]);
    const clone = new Set<string>(set);
    this.sets.set(key, clone);
    this.emptied.delete(key);
    return clone;
  }

  /** The users of `key` at `revision`, for a snapshot opened at that revision. */
  private usersAt(key: string, live: ReadonlySet<string>, revision: number): ReadonlySet<string> {
    const entries = this.undo.get(key);
    if (entries) for (const e of entries) if (e.revision > revision) return e.users ?? NO_USERS;
    return live;
  }

  /**
   * Opens a read of the whole set at the index's current revision. Costs no copy: the snapshot
   * walks the live map, reading changed keys from the undo log.
   */
  openSnapshot(): SetSnapshot {
    const revision = this.revision;
    this.readers.set(revision, (this.readers.get(revision) ?? 0) + 1);
    this.readerCount++;
    let open = true;
    const close = (): void => {
      if (!open) return;
      open = false;
      this.closeReader(revision);
    };
    const sets = this.sets;
    const usersAt = (key: string, live: ReadonlySet<string>): ReadonlySet<string> => this.usersAt(key, live, revision);
    function* triples(): Generator<[string, string, string]> {
      for (const [key, live] of sets) {
        if (!open) return;
        const users = usersAt(key, live);
        if (users.size === 0) continue;
        const hash = key.lastIndexOf('#');
        const object = key.slice(0, hash);
        const relation = key.slice(hash + 1);
        for (const u of users) yield [u, relation, object];
      }
    }
    return { revision, triples, close };
  }

  /** A snapshot closed: drops the undo entries no open snapshot can read, and the emptied keys. */
  private closeReader(revision: number): void {
    const n = (this.readers.get(revision) ?? 1) - 1;
    if (n > 0) this.readers.set(revision, n);
    else this.readers.delete(revision);
    this.readerCount--;
    if (this.readerCount === 0) {
      this.undo.clear();
      for (const key of this.emptied) if (this.sets.get(key)?.size === 0) this.sets.delete(key);
      this.emptied.clear();
      return;
    }
    let oldest = Infinity;
    for (const r of this.readers.keys()) oldest = Math.min(oldest, r);
    // An entry of revision r is read only by snapshots older than r.
    for (const [key, entries] of this.undo) {
      let keep = 0;
      while (keep < entries.length && (entries[keep] as UndoEntry).revision <= oldest) keep++;
      if (keep === entries.length) this.undo.delete(key);
      else if (keep > 0) entries.splice(0, keep);
    }
  }

  /** Open snapshots and the undo entries kept for them (metrics and tests). */
  get snapshotState(): { readonly readers: number; readonly undoEntries: number; readonly emptiedKeys: number } {
    let undoEntries = 0;
    for (const e of this.undo.values()) undoEntries += e.length;
    return { readers: this.readerCount, undoEntries, emptiedKeys: this.emptied.size };
  }

  /**
   * Appends the revision's differences to the ring in their sorted order (once ACTIVE). When they
   * outnumber the ring, the ones it could not keep are counted but never built.
   */
  private *append(revision: number, d: RevisionDeltas): Generator<void> {
    this.updatedAt = Date.now();
    if (this.status !== 'ACTIVE') return;
    const skip = Math.max(0, d.count - this.limits.ringSize);
    if (skip > 0) this.ring.reset({ revision, position: skip - 1 });
    yield* d.numbered(revision, skip, this.ring);
    this.eventsCount += d.count;
  }

  /** Events after `from`, oldest first, at most `max`; undefined when `from` is older than the ring. */
  eventsAfter(from: EventPoint, max: number): ExpansionEvent[] | undefined {
    return this.ring.after(from, max);
  }

  /** Listeners told of every applied revision, status change and deletion. */
  listen(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private wake(): void {
    for (const fn of [...this.listeners]) fn();
  }

  /** The index was deleted (or its store): streams close. */
  close(): void {
    this.deleted = true;
    this.wake();
  }
}
