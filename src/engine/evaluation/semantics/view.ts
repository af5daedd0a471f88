// In-memory TupleViews: a map-backed view over a tuple list, and the contextual-tuple overlay.
// Both are real implementations of the TupleView contract (src/index/types.ts), used by the
// evaluator for contextual tuples and by tests as a store snapshot.
//
// Example: overlayView(base, [{object:'document:1', relation:'viewer', user:'user:anne'}])
//   .users('document:1', 'viewer') yields the contextual tuple first, then base's tuples.

import type { TupleKey } from '../../../domain/types.js';
import { typeOf } from '../../../domain/tuple.js';
import type { TupleEntry, TupleView } from '../../../index/types.js';

function push(map: Map<string, TupleEntry[]>, key: string, entry: TupleEntry): void {
  const list = map.get(key);
  if (list) list.push(entry);
  else map.set(key, [entry]);
}

const NONE: readonly TupleEntry[] = [];

/** A TupleView over a fixed list of tuples, in insertion order. Duplicates are kept as given. */
export class MemoryTupleView implements TupleView {
  readonly revision: number;
  private readonly byObject = new Map<string, TupleEntry[]>();
  private readonly byUser = new Map<string, TupleEntry[]>();

  constructor(tuples: readonly TupleKey[], revision = 0) {
    this.revision = revision;
    for (const t of tuples) this.add(t);
  }

  private add(t: TupleKey): void {
    const entry: TupleEntry = { object: t.object, relation: t.relation, user: t.user, condition: t.condition };
    push(this.byObject, `${t.object}#${t.relation}`, entry);
    push(this.byUser, `${typeOf(t.object)}\u0000${t.relation}\u0000${t.user}`, entry);
  }

  users(object: string, relation: string): Iterable<TupleEntry> {
    return this.byObject.get(`${object}#${relation}`) ?? NONE;
  }

  objects(objectType: string, relation: string, user: string): Iterable<TupleEntry> {
    return this.byUser.get(`${objectType}\u0000${relation}\u0000${user}`) ?? NONE;
  }
}

/** `base` plus `contextual` tuples for one request; contextual entries come first on every key. */
export function overlayView(base: TupleView, contextual: readonly TupleKey[]): TupleView {
  if (contextual.length === 0) return base;
  const extra = new MemoryTupleView(contextual, base.revision);
  return {
    revision: base.revision,
    *users(object: string, relation: string): Iterable<TupleEntry> {
      yield* extra.users(object, relation);
      yield* base.users(object, relation);
    },
    *objects(objectType: string, relation: string, user: string): Iterable<TupleEntry> {
      yield* extra.objects(objectType, relation, user);
      yield* base.objects(objectType, relation, user);
    },
  };
}
