// The last events of one permission index, kept for streams and for resumption with `from`: a
// circular buffer of at most `capacity` events in columns (revision, position, operation and the
// three strings), so keeping an event allocates nothing. Event objects would each live until
// the ring overwrites them (a second at 100,000 events/s): long enough to be copied by every young
// collection and promoted to the old generation, where they die in its collections; the columns
// hold only references to strings the index already holds (a user of a set, a key's object and
// relation once per key and revision). A stream's page is built as objects when it is read, and
// dies young.
// Example: with capacity 2, after (7,0) (7,1) (8,0) the ring holds (7,1) (8,0) and its floor is
// (7,0): `after({revision: 7, position: 0}, 10)` gives both, `after({revision: 6, …})` undefined.

import type { EventPoint, ExpansionEvent } from '../contract.js';

/** Initial column length (grown by doubling up to the capacity: an idle index holds little). */
const INITIAL = 1024;

export class EventRing {
  private revisions = new Float64Array(0);
  private positions = new Float64Array(0);
  private inserts = new Uint8Array(0);
  private users: string[] = [];
  private relations: string[] = [];
  private objects: string[] = [];
  /** Column index of the oldest event. */
  private head = 0;
  /** Events held. */
  length = 0;
  /** Events at or before this point are not held (evicted, or before the index became ACTIVE). */
  private floorRevision = 0;
  private floorPosition = Infinity;

  constructor(private readonly capacity: number) {}

  get floor(): EventPoint {
    return { revision: this.floorRevision, position: this.floorPosition };
  }

  /** Forgets every event; the ones at or before `floor` count as evicted. */
  reset(floor: EventPoint): void {
    this.head = 0;
    this.length = 0;
    this.floorRevision = floor.revision;
    this.floorPosition = floor.position;
  }

  /** Appends an event (after every held one); the oldest is evicted when the ring is full. */
  push(revision: number, position: number, insert: boolean, user: string, relation: string, object: string): void {
    if (this.capacity <= 0) {
      this.floorRevision = revision;
      this.floorPosition = position;
      return;
    }
    const size = this.revisions.length;
    if (this.length === size && size < this.capacity) this.grow();
    let at: number;
    if (this.length === this.capacity) {
      at = this.head;
      this.floorRevision = this.revisions[at] as number;
      this.floorPosition = this.positions[at] as number;
      this.head = (at + 1) % this.revisions.length;
    } else {
      at = (this.head + this.length) % this.revisions.length;
      this.length++;
    }
    this.revisions[at] = revision;
    this.positions[at] = position;
    this.inserts[at] = insert ? 1 : 0;
    this.users[at] = user;
    this.relations[at] = relation;
    this.objects[at] = object;
  }

  /** Events after `from`, oldest first, at most `max`; undefined when `from` is older than the ring. */
  after(from: EventPoint, max: number): ExpansionEvent[] | undefined {
    if (
      from.revision < this.floorRevision ||
      (from.revision === this.floorRevision && from.position < this.floorPosition)
    )
      return undefined;
    // The first held event after `from` (binary search over the held order).
    const size = this.revisions.length;
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = (this.head + mid) % size;
      const r = this.revisions[at] as number;
      if (from.revision < r || (from.revision === r && from.position < (this.positions[at] as number))) hi = mid;
      else lo = mid + 1;
    }
    const n = Math.max(0, Math.min(max, this.length - lo));
    const out = new Array<ExpansionEvent>(n);
    for (let i = 0; i < n; i++) {
      const at = (this.head + lo + i) % size;
      out[i] = {
        revision: this.revisions[at] as number,
        position: this.positions[at] as number,
        operation: this.inserts[at] === 1 ? 'INSERT' : 'DELETE',
        user: this.users[at] as string,
        relation: this.relations[at] as string,
        object: this.objects[at] as string,
      };
    }
    return out;
  }

  /** Doubles the columns (up to the capacity), the held events moved to the front in order. */
  private grow(): void {
    const size = this.revisions.length;
    const next = Math.min(this.capacity, Math.max(INITIAL, size * 2));
    const revisions = new Float64Array(next);
    const positions = new Float64Array(next);
    const inserts = new Uint8Array(next);
    const users = new Array<string>(next).fill('');
    const relations = new Array<string>(next).fill('');
    const objects = new Array<string>(next).fill('');
    for (let i = 0; i < this.length; i++) {
      const at = (this.head + i) % size;
      revisions[i] = this.revisions[at] as number;
      positions[i] = this.positions[at] as number;
      inserts[i] = this.inserts[at] as number;
      users[i] = this.users[at] as string;
      relations[i] = this.relations[at] as string;
      objects[i] = this.objects[at] as string;
    }
    this.revisions = revisions;
    this.positions = positions;
    this.inserts = inserts;
    this.users = users;
    this.relations = relations;
    this.objects = objects;
    this.head = 0;
  }
}
