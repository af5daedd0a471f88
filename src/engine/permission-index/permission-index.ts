// One permission index on this node: its definition, its materialised triples (per
// `object#relation`, the concrete users the relation resolves to under the assigned model), the
// build that fills them (BUILDING → ACTIVE, or FAILED with a reason) and the incremental
// maintenance that keeps them exact, revision by revision, with a bounded ring of the resulting
// INSERT/DELETE events. Event ids are (revision, position in the revision's sorted deltas), so
// every node that applies the same revisions emits the same ids.
// Example: after `doc:1#viewer@user:anne` at revision 7 on an index of doc#viewer, the ring ends
// with {revision: 7, position: 0, operation: 'INSERT', user: 'user:anne', relation: 'viewer', object: 'doc:1'}.

import type { TupleKey } from '../../domain/types.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import type { CompiledModel } from '../../model/types.js';
import type { PermissionIndexRecord } from '../../storage/types.js';
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

  constructor(
    readonly record: PermissionIndexRecord,
    readonly model: CompiledModel,
    private readonly limits: PermissionIndexLimits = DEFAULT_PERMISSION_INDEX_LIMITS,
  ) {
    this.graph = indexGraph(model, record.relations);
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
    const set = this.sets.get(key);
    const has = set?.has(user) ?? false;
    if (allowed && !has) {
      if (set) set.add(user);
      else this.sets.set(key, new Set([user]));
      this.triples++;
      out.push({ revision: 0, position: 0, operation: 'INSERT', user, relation, object });
    } else if (!allowed && has && set) {
      set.delete(user);
      if (set.size === 0) this.sets.delete(key);
      this.triples--;
      out.push({ revision: 0, position: 0, operation: 'DELETE', user, relation, object });
    }
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
    return outcome.allowed;
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

  /** Every materialised triple now, as `[user, relation, object]`, in key order of the maps. */
  *triplesNow(): Generator<[string, string, string]> {
    for (const [key, users] of this.sets) {
      const hash = key.lastIndexOf('#');
      const object = key.slice(0, hash);
      const relation = key.slice(hash + 1);
      for (const u of users) yield [u, relation, object];
    }
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
