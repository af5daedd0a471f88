// One permission index on this node: its definition, its materialised triples (per
// `object#relation`, the concrete users the relation resolves to under the assigned model), the
// build that fills them (BUILDING → ACTIVE, or FAILED with a reason) and the incremental
// maintenance that keeps them exact, revision by revision, with a bounded ring of the resulting
// INSERT/DELETE events. Event ids are (revision, position in the revision's sorted deltas), so
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
import type { CompiledModel } from '../../model/types.js';
import type { PermissionIndexRecord } from '../../storage/types.js';
import { admitsWildcard, listedByName } from '../evaluation/list/list-users.js';
import { checkStatus } from '../evaluation/walker/checker.js';
import { indexGraph, type IndexGraph } from './graph.js';
import { candidateKeys, candidateUsers, usersOf } from './maintain.js';
import { DEFAULT_PERMISSION_INDEX_LIMITS } from '../config.js';
import type { EventPoint, ExpansionEvent, PermissionIndexLimits, PermissionIndexStatus } from '../contract.js';

const before = (a: EventPoint, b: EventPoint): boolean =>
  a.revision < b.revision || (a.revision === b.revision && a.position < b.position);

function compareEvents(a: ExpansionEvent, b: ExpansionEvent): number {
  if (a.object !== b.object) return a.object < b.object ? -1 : 1;
  if (a.relation !== b.relation) return a.relation < b.relation ? -1 : 1;
  if (a.user !== b.user) return a.user < b.user ? -1 : 1;
  return 0;
}

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
  private readonly ring: ExpansionEvent[] = [];
  private ringStart = 0;
  /** Events at or before this point are not in the ring (evicted, or before the index became ACTIVE). */
  floor: EventPoint = { revision: 0, position: Infinity };
  triples = 0;
  ingestedChanges = 0;
  eventsCount = 0;
  revision = 0;
  freshness = Date.now();
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

  /** User types whose typed wildcard some relation accepts (`allowed` asks ListUsers' rule for them). */
  private readonly wildcardTypes: ReadonlySet<string>;

  constructor(
    readonly record: PermissionIndexRecord,
    readonly model: CompiledModel,
    private readonly limits: PermissionIndexLimits = DEFAULT_PERMISSION_INDEX_LIMITS,
  ) {
    this.graph = indexGraph(model, record.relations);
    this.wildcardTypes = new Set(this.graph.userTypes.filter((t) => admitsWildcard(model, t)));
  }

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
   * Builds pending keys over `snap` (the index's latest snapshot) for about `budgetMs`; true when
   * the build is over (ACTIVE or FAILED).
   */
  buildStep(snap: IndexSnapshot, budgetMs: number): boolean {
    if (this.status !== 'BUILDING' || !this.pending) return true;
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
        for (const user of candidates) if (this.allowed(snap, object, relation, user)) users.add(user);
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
    this.floor = { revision: this.revision, position: Infinity };
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
    this.triples = 0;
    this.wake();
    return true;
  }

  /**
   * Applies one revision the store's index has just applied: re-checks every candidate pair in
   * `after` and records the differences as that revision's events. Synchronous, so it sees the
   * revision exactly (no later one can be applied in between).
   */
  applied(
    beforeSnap: IndexSnapshot,
    afterSnap: IndexSnapshot,
    revision: number,
    deleted: readonly TupleKey[],
    written: readonly TupleKey[],
  ): void {
    this.revision = revision;
    this.freshness = Date.now();
    if (this.status === 'FAILED') return;
    this.owned.clear();
    try {
      const deltas = this.deltas(beforeSnap, afterSnap, deleted, written);
      if (deltas.length > 0) this.append(revision, deltas);
      if (this.triples > this.limits.maxTriples) this.fail(`more than ${this.limits.maxTriples} triples`);
    } catch (err) {
      this.fail(`maintenance failed at revision ${revision}: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.wake();
  }

  private deltas(
    beforeSnap: IndexSnapshot,
    afterSnap: IndexSnapshot,
    deleted: readonly TupleKey[],
    written: readonly TupleKey[],
  ): ExpansionEvent[] {
    const out: ExpansionEvent[] = [];
    const checked = new Set<string>();
    for (const list of [deleted, written]) {
      // A delete's paths exist only before it, a write's only after it.
      const snap = list === deleted ? beforeSnap : afterSnap;
      for (const t of list) {
        if (!this.graph.reach.has(`${t.object.slice(0, t.object.indexOf(':'))}#${t.relation}`)) continue;
        this.ingestedChanges++;
        const keys = new Set<string>();
        candidateKeys(this.graph, snap, t, keys);
        for (const k of keys) if (this.pendingSet.has(k)) keys.delete(k);
        if (keys.size === 0) continue;
        if (this.graph.hasDifference && t.user.includes('#')) {
          // A userset tuple may close or open a cycle under a `but not`, which changes the answer
          // for every user of the keys above it: each key is re-checked whole (its materialised
          // users and the ones ListUsers finds now).
          for (const key of keys) {
            const users = new Set(this.sets.get(key));
            const hash = key.lastIndexOf('#');
            usersOf(this.graph, this.model, afterSnap, key.slice(0, hash), key.slice(hash + 1), users);
            for (const user of users) this.recheck(afterSnap, key, user, checked, out);
          }
          continue;
        }
        const users = new Set<string>();
        candidateUsers(this.graph, this.model, snap, t, users);
        for (const key of keys) for (const user of users) this.recheck(afterSnap, key, user, checked, out);
      }
    }
    return out;
  }

  /** One candidate pair against `snap` (once per revision), diffed with the materialised set. */
  private recheck(snap: IndexSnapshot, key: string, user: string, checked: Set<string>, out: ExpansionEvent[]): void {
    const pair = `${key}@${user}`;
    if (checked.has(pair)) return;
    checked.add(pair);
    const hash = key.lastIndexOf('#');
    const object = key.slice(0, hash);
    const relation = key.slice(hash + 1);
    const allowed = this.allowed(snap, object, relation, user);
    const has = this.sets.get(key)?.has(user) ?? false;
    if (allowed && !has) {
      this.writable(key).add(user);
      this.triples++;
      out.push({ revision: 0, position: 0, operation: 'INSERT', user, relation, object });
    } else if (!allowed && has) {
      const set = this.writable(key);
      set.delete(user);
      if (set.size === 0) {
        if (this.readerCount === 0) this.sets.delete(key);
        else this.emptied.add(key);
      }
      this.triples--;
      out.push({ revision: 0, position: 0, operation: 'DELETE', user, relation, object });
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
    const entry: UndoEntry = { revision: this.revision, users: set && set.size > 0 ? set : undefined };
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
   * Check on the walker (the production path); an evaluation error fails the index. At instant 0:
   * the index follows revisions, not the clock, so an expiring tuple counts until the expiry
   * sweeper deletes it (a revision every node applies alike).
   */
  private allowed(snap: IndexSnapshot, object: string, relation: string, user: string): boolean {
    const outcome = checkStatus(
      snap,
      this.model,
      { object, relation, user, contextualTuples: [] },
      this.limits.resolveDepth,
      0,
    );
    if ('error' in outcome) throw outcome.error;
    if (!outcome.allowed || user.endsWith(':*')) return outcome.allowed;
    // The set is ListUsers' answer: a user that only a typed wildcard grants is `type:*`'s.
    if (!this.wildcardTypes.has(user.slice(0, user.indexOf(':')))) return true;
    const ctx = { model: this.model, view: snap, resolveDepth: this.limits.resolveDepth, deadline: Infinity };
    return listedByName(ctx, object, relation, user);
  }

  /** Numbers the revision's deltas in their sorted order and appends them to the ring (once ACTIVE). */
  private append(revision: number, deltas: ExpansionEvent[]): void {
    deltas.sort(compareEvents);
    this.updatedAt = Date.now();
    if (this.status !== 'ACTIVE') return;
    for (let i = 0; i < deltas.length; i++) {
      const d = deltas[i] as ExpansionEvent;
      this.ring.push({ ...d, revision, position: i });
      this.eventsCount++;
    }
    const excess = this.ring.length - this.ringStart - this.limits.ringSize;
    if (excess > 0) {
      const last = this.ring[this.ringStart + excess - 1] as ExpansionEvent;
      this.floor = { revision: last.revision, position: last.position };
      this.ringStart += excess;
      if (this.ringStart > this.limits.ringSize) {
        this.ring.splice(0, this.ringStart);
        this.ringStart = 0;
      }
    }
  }

  /** Events after `from`, oldest first, at most `max`; undefined when `from` is older than the ring. */
  eventsAfter(from: EventPoint, max: number): ExpansionEvent[] | undefined {
    if (before(from, this.floor)) return undefined;
    // Binary search for the first event after `from`.
    let lo = this.ringStart;
    let hi = this.ring.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const e = this.ring[mid] as ExpansionEvent;
      if (before(from, e)) hi = mid;
      else lo = mid + 1;
    }
    return this.ring.slice(lo, lo + max);
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
