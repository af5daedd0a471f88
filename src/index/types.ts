// Read access to one immutable snapshot of a store's tuples, by strings.
// The compact u32 index (src/index/) implements it for the TypeScript evaluators; the walker in
// assembly/ reads the index bytes directly instead. Tuples here are raw: read-time validity
// against the query's model (docs/reference/semantics.md §4.5) and expiry at the query's instant are the
// evaluator's job, not the view's.
//
// Example: after writing `document:1#viewer@group:eng#member`,
//   view.users('document:1', 'viewer') yields {object:'document:1', relation:'viewer', user:'group:eng#member'}
//   view.objects('document', 'viewer', 'group:eng#member') yields the same entry.

import type { RelationshipCondition } from '../domain/types.js';

export interface TupleEntry {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
  readonly condition?: RelationshipCondition | undefined;
  /** `expires_at` in ms since the epoch: at and after that instant the tuple grants nothing. */
  readonly expiresAt?: number | undefined;
}

export interface TupleView {
  /** The store revision this snapshot reflects (contextual overlays keep their base's revision). */
  readonly revision: number;
  /** Every tuple `object#relation@<any user>`, in no particular order. */
  users(object: string, relation: string): Iterable<TupleEntry>;
  /** Every tuple `<objectType>:<any id>#relation@user` for exactly this user string. */
  objects(objectType: string, relation: string, user: string): Iterable<TupleEntry>;
}
