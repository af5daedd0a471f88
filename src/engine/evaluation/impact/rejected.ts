// The stored tuples a candidate model reads differently: tuples the base model accepts (§4.5
// read-time validity) that the candidate does not, by reason, and accepted tuples whose condition
// changed its definition. Counts are complete; each reason keeps only its first `sampleSize` tuples.
// Example: `viewer: [user, team#member]` → `viewer: [user]` rejects `document:1#viewer@team:a#member`
//   with reason `restriction_removed`.

import type { TupleKey } from '../../../domain/types.js';
import type { TupleEntry } from '../../../index/types.js';
import { conditionSignature, relationSignature } from '../../../model/diff.js';
import type { CompiledModel, CompiledRelation, DirectType } from '../../../model/types.js';
import { isValidAtReadTime } from '../semantics/validity.js';
import type { RejectReason } from '../../contract.js';

/** The user's form (object, wildcard, userset) fits `d`, whatever its condition. */
function formFits(d: DirectType, user: string): boolean {
  const colon = user.indexOf(':');
  if (user.slice(0, colon) !== d.type) return false;
  const hash = user.lastIndexOf('#');
  if (hash > colon) return d.relation === user.slice(hash + 1);
  if (user.endsWith(':*')) return d.wildcard;
  return !d.wildcard && d.relation === undefined;
}

/** Why a tuple the base accepts is not accepted by the candidate (`rel`: its candidate relation). */
function rejectReason(candidate: CompiledModel, rel: CompiledRelation | undefined, t: TupleEntry): RejectReason {
  const type = t.object.slice(0, t.object.indexOf(':'));
  if (!candidate.types.has(type)) return 'type_removed';
  if (!rel) return 'relation_removed';
  const fits = rel.directTypes.filter((d) => formFits(d, t.user));
  const plainUser = !t.user.includes('#') && !t.user.endsWith(':*');
  if (fits.length === 0 || (rel.isTupleset && !plainUser)) return 'restriction_removed';
  return t.condition?.name ? 'condition_removed' : 'condition_required';
}

export class RejectedTally {
  readonly counts = new Map<RejectReason, number>();
  readonly samples = new Map<RejectReason, TupleKey[]>();

  constructor(
    private readonly base: CompiledModel,
    private readonly candidate: CompiledModel,
    private readonly sampleSize: number,
  ) {}

  /**
   * Whether tuples of `type#relation` can be read differently at all: the relation's restrictions,
   * its tupleset role and the conditions its restrictions name are the same in both models.
   */
  mayDiffer(type: string, relation: string): boolean {
    const a = this.base.types.get(type)?.relations.get(relation);
    const b = this.candidate.types.get(type)?.relations.get(relation);
    if (!a) return false; // the base reads none of them
    if (!b) return true;
    const restrictions = (r: CompiledRelation): string => relationSignature({ ...r, rewrite: { kind: 'this' } });
    if (restrictions(a) !== restrictions(b)) return true;
    return a.directTypes.some(
      (d) =>
        d.condition !== undefined &&
        conditionSignature(this.base, d.condition) !== conditionSignature(this.candidate, d.condition),
    );
  }

  /** Tallies one stored tuple of a relation for which `mayDiffer` held. */
  add(t: TupleEntry): void {
    if (!isValidAtReadTime(this.base, t)) return;
    let reason: RejectReason | undefined;
    if (!isValidAtReadTime(this.candidate, t)) {
      const type = t.object.slice(0, t.object.indexOf(':'));
      reason = rejectReason(this.candidate, this.candidate.types.get(type)?.relations.get(t.relation), t);
    } else if (t.condition?.name) {
      const name = t.condition.name;
      if (conditionSignature(this.base, name) !== conditionSignature(this.candidate, name))
        reason = 'condition_changed';
    }
    if (reason === undefined) return;
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    const sample = this.samples.get(reason) ?? [];
    this.samples.set(reason, sample);
    if (sample.length < this.sampleSize) sample.push(tupleKeyOf(t));
  }

  get total(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }
}

function tupleKeyOf(t: TupleEntry): TupleKey {
  const key: TupleKey = { object: t.object, relation: t.relation, user: t.user };
  return t.condition ? { ...key, condition: t.condition } : key;
}
