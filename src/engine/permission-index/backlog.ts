// The revisions a store's permission indexes have not maintained yet, and a read view of the
// store's tuples at any of those revisions. The tuple index keeps only its latest snapshot (an
// image per revision would cost the overlay's size each), so a view at revision v is the latest
// snapshot corrected by the changes after v that this backlog holds: a tuple whose first change
// after v is a delete existed at v, one whose first change after v is a write did not. The
// backlog only grows by the RevisionFeed's hook (one entry per applied revision, in order) and
// shrinks when every index of the store has passed an entry. The hook runs before the Write is
// acknowledged, so it only queues: the changes are filed per key by the first read that needs
// them (a view behind the snapshot), off the acknowledgement path; an index that keeps up reads
// its views at the snapshot and files nothing.
// Example: `doc:1#viewer@user:anne` written at 8, latest snapshot at 9: the view at 7 does not
// list it in users('doc:1', 'viewer'), the views at 8 and 9 do.

import type { TupleKey } from '../../domain/types.js';
import { expiryMs } from '../../index/dictionary.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import type { TupleEntry, TupleView } from '../../index/types.js';

/** One revision the tuple index applied: its changes as the write reported them. */
export interface PendingRevision {
  readonly revision: number;
  readonly deleted: readonly TupleKey[];
  readonly written: readonly TupleKey[];
  /** performance.now() when the revision was applied to the tuple index (index lag). */
  readonly at: number;
  /**
   * Userset expansions at this revision, shared by the store's indexes (the same group closure
   * is read once however many indexes follow it); dropped with the entry.
   */
  readonly expansions: Map<string, ReadonlySet<string>>;
}

/** The store's tuples just before and at the revision being maintained (renewed every slice). */
export interface RevisionViews {
  before: RevisionView;
  after: RevisionView;
}

/** The pending changes of one tuple key: `2 * revision + (write ? 1 : 0)`, ascending. */
interface History {
  readonly entry: TupleEntry;
  readonly changes: number[];
}

const toEntry = (t: TupleKey): TupleEntry => {
  const expiresAt = expiryMs(t.expires_at);
  const e = { object: t.object, relation: t.relation, user: t.user };
  if (t.condition)
    return expiresAt === undefined ? { ...e, condition: t.condition } : { ...e, condition: t.condition, expiresAt };
  return expiresAt === undefined ? e : { ...e, expiresAt };
};

/** True when the key with history `h` existed at revision `v`. */
function presentAt(h: History, v: number): boolean {
  const c = h.changes;
  for (let i = 0; i < c.length; i++) {
    const x = c[i] as number;
    if (Math.floor(x / 2) > v) return x % 2 === 0; // the first change after v: a delete means it was there
  }
  return (c[c.length - 1] as number) % 2 === 1;
}

export class Backlog {
  private readonly queue: PendingRevision[] = [];
  private head = 0;
  /** Queue entries from here on are not filed in `byNode` / `byUser` yet. */
  private filed = 0;
  /** `object#relation` → user → history. */
  private readonly byNode = new Map<string, Map<string, History>>();
  /** `relation@user` → object → history. */
  private readonly byUser = new Map<string, Map<string, History>>();
  /** Tuple changes held (the lag bound counts these). */
  changes = 0;
  private waiters: (() => void)[] = [];
  private passWaiters: { readonly revision: number; readonly resolve: () => void }[] = [];

  push(p: PendingRevision): void {
    this.queue.push(p);
    this.changes += p.deleted.length + p.written.length;
  }

  /** Files every queued revision's changes per key (in revision order: histories ascend). */
  private file(): void {
    if (this.filed < this.head) this.filed = this.head;
    while (this.filed < this.queue.length) {
      const p = this.queue[this.filed++] as PendingRevision;
      for (const t of p.deleted) this.record(t, 2 * p.revision);
      for (const t of p.written) this.record(t, 2 * p.revision + 1);
    }
  }

  /** The oldest pending revision after `revision`, if any. */
  after(revision: number): PendingRevision | undefined {
    for (let i = this.head; i < this.queue.length; i++) {
      const p = this.queue[i] as PendingRevision;
      if (p.revision > revision) return p;
    }
    return undefined;
  }

  get latest(): number | undefined {
    return this.queue.length > this.head ? (this.queue[this.queue.length - 1] as PendingRevision).revision : undefined;
  }

  /** Forgets the revisions at or before `revision` (every index has passed them). */
  dropThrough(revision: number): void {
    while (this.head < this.queue.length && (this.queue[this.head] as PendingRevision).revision <= revision) {
      const p = this.queue[this.head] as PendingRevision;
      const wasFiled = this.head < this.filed;
      this.queue[this.head++] = undefined as unknown as PendingRevision;
      if (wasFiled) {
        for (const t of p.deleted) this.forget(t);
        for (const t of p.written) this.forget(t);
      }
      this.changes -= p.deleted.length + p.written.length;
    }
    if (this.filed < this.head) this.filed = this.head;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.filed -= this.head;
      this.head = 0;
    }
  }

  /** Resolves once the backlog holds at most `max` changes (the write path's bound). */
  below(max: number): Promise<void> | undefined {
    if (this.changes <= max) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Releases the writers waiting for room once the backlog is at most `max`. */
  release(max: number): void {
    if (this.changes > max || this.waiters.length === 0) return;
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  /** Calls `resolve` once every index has passed `revision`. */
  onPassed(revision: number, resolve: () => void): void {
    this.passWaiters.push({ revision, resolve });
  }

  /** Every index has maintained `revision`: its waiters resolve. */
  passed(revision: number): void {
    if (this.passWaiters.length === 0) return;
    const still = [];
    for (const w of this.passWaiters) {
      if (w.revision <= revision) w.resolve();
      else still.push(w);
    }
    this.passWaiters = still;
  }

  /** A view at revision `v` over `snap` (the latest snapshot); valid while `snap` is. */
  view(snap: IndexSnapshot, v: number): RevisionView {
    return new RevisionView(this, snap, v);
  }

  usersOf(object: string, relation: string): Map<string, History> | undefined {
    if (this.filed < this.queue.length) this.file();
    return this.byNode.get(`${object}#${relation}`);
  }

  objectsOf(relation: string, user: string): Map<string, History> | undefined {
    if (this.filed < this.queue.length) this.file();
    return this.byUser.get(`${relation}@${user}`);
  }

  private record(t: TupleKey, change: number): void {
    const nk = `${t.object}#${t.relation}`;
    let users = this.byNode.get(nk);
    if (!users) this.byNode.set(nk, (users = new Map()));
    let h = users.get(t.user);
    if (!h) {
      h = { entry: toEntry(t), changes: [] };
      users.set(t.user, h);
      const uk = `${t.relation}@${t.user}`;
      let objects = this.byUser.get(uk);
      if (!objects) this.byUser.set(uk, (objects = new Map()));
      objects.set(t.object, h);
    }
    h.changes.push(change);
  }

  /** Drops the oldest change of `t`'s key (the one of the revision being forgotten). */
  private forget(t: TupleKey): void {
    const nk = `${t.object}#${t.relation}`;
    const users = this.byNode.get(nk);
    const h = users?.get(t.user);
    if (!users || !h) return;
    h.changes.shift();
    if (h.changes.length > 0) return;
    users.delete(t.user);
    if (users.size === 0) this.byNode.delete(nk);
    const uk = `${t.relation}@${t.user}`;
    const objects = this.byUser.get(uk);
    objects?.delete(t.object);
    if (objects?.size === 0) this.byUser.delete(uk);
  }
}

/**
 * The store's tuples at revision `revision`, read from the latest snapshot `snap` and corrected
 * by the backlog. `exact`: the snapshot is at this revision (the walker can read it directly).
 */
export class RevisionView implements TupleView {
  constructor(
    private readonly backlog: Backlog,
    readonly snap: IndexSnapshot,
    readonly revision: number,
  ) {}

  get exact(): boolean {
    return this.snap.revision === this.revision;
  }

  users(object: string, relation: string): Iterable<TupleEntry> {
    const pending = this.exact ? undefined : this.backlog.usersOf(object, relation);
    if (!pending) return this.snap.users(object, relation);
    return this.correctedUsers(object, relation, pending);
  }

  objects(objectType: string, relation: string, user: string): Iterable<TupleEntry> {
    const pending = this.exact ? undefined : this.backlog.objectsOf(relation, user);
    if (!pending) return this.snap.objects(objectType, relation, user);
    return this.correctedObjects(objectType, relation, user, pending);
  }

  private *correctedUsers(object: string, relation: string, pending: Map<string, History>): Iterable<TupleEntry> {
    for (const e of this.snap.users(object, relation)) if (!pending.has(e.user)) yield e;
    for (const h of pending.values()) if (presentAt(h, this.revision)) yield h.entry;
  }

  private *correctedObjects(
    objectType: string,
    relation: string,
    user: string,
    pending: Map<string, History>,
  ): Iterable<TupleEntry> {
    for (const e of this.snap.objects(objectType, relation, user)) if (!pending.has(e.object)) yield e;
    for (const [object, h] of pending) {
      if (object.length > objectType.length && object.startsWith(objectType) && object[objectType.length] === ':')
        if (presentAt(h, this.revision)) yield h.entry;
    }
  }
}
