// The differences one revision makes to a permission index, gathered per `object#relation` while
// the revision is maintained (over several event-loop slices) and then numbered in their sorted
// order (object, relation, user): an event's id is (revision, position), the same on every node.
// Nothing is allocated per difference but the user string's slot in its key's list.
// Example: INSERT doc:2#viewer@user:b and DELETE doc:1#viewer@user:a at revision 9 become
// (9, 0) DELETE doc:1 … user:a, (9, 1) INSERT doc:2 … user:b.

import { compareStrings, sortSliced } from './sliced-sort.js';

/** Where numbered differences go (the index's event ring): one call each, no object per event. */
export interface EventSink {
  push(revision: number, position: number, insert: boolean, user: string, relation: string, object: string): void;
}

interface KeyDeltas {
  readonly object: string;
  readonly relation: string;
  inserts: string[];
  deletes: string[];
}

const compareKeys = (a: KeyDeltas, b: KeyDeltas): number =>
  compareStrings(a.object, b.object) || compareStrings(a.relation, b.relation);

export class RevisionDeltas {
  private readonly byKey = new Map<string, KeyDeltas>();
  /** Differences recorded. */
  count = 0;

  add(key: string, user: string, insert: boolean): void {
    const k = this.of(key);
    (insert ? k.inserts : k.deletes).push(user);
    this.count++;
  }

  /** The list of `key`'s inserted users, for a caller adding many (it counts them in `count`). */
  inserts(key: string): string[] {
    return this.of(key).inserts;
  }

  /** Records every user of `users` as inserted into `key` (counted in `count`). */
  insertAll(key: string, users: ReadonlySet<string>): void {
    const k = this.of(key);
    if (k.inserts.length === 0) k.inserts = [...users];
    else for (const u of users) k.inserts.push(u);
    this.count += users.size;
  }

  private of(key: string): KeyDeltas {
    let k = this.byKey.get(key);
    if (!k) {
      const hash = key.lastIndexOf('#');
      k = { object: key.slice(0, hash), relation: key.slice(hash + 1), inserts: [], deletes: [] };
      this.byKey.set(key, k);
    }
    return k;
  }

  /**
   * Pushes each difference from position `skip` on into `sink`, in sorted order, numbered from 0
   * over all of them (the ones before `skip` are counted, not pushed). Yields between bounded steps.
   */
  *numbered(revision: number, skip: number, sink: EventSink): Generator<void> {
    const keys = yield* sortSliced([...this.byKey.values()], compareKeys);
    let position = 0;
    for (const k of keys) {
      const ins = yield* sortSliced(k.inserts, compareStrings);
      const del = yield* sortSliced(k.deletes, compareStrings);
      let i = 0;
      let j = 0;
      while (i < ins.length || j < del.length) {
        const insert = j >= del.length || (i < ins.length && (ins[i] as string) <= (del[j] as string));
        const user = (insert ? ins[i++] : del[j++]) as string;
        if (position >= skip) sink.push(revision, position, insert, user, k.relation, k.object);
        if ((++position & 4095) === 0) yield;
      }
    }
  }
}
