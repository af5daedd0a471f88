// The impact stream of a candidate model against one pinned snapshot of the store: structural
// lines, rejected tuples, then per evaluated relation and per object of its type the pairs that
// gain or lose access, the changed assertions and the summary (line order: ./types.ts).
// Each object's users come from the member sets of ./members.ts (computed once per node, shared by
// both sides where the relation is unchanged, in a cache bounded by MEMBER_CACHE_BYTES), falling
// back per object to an expansion and a Check per candidate (./pairs.ts) where they cannot be exact.
// Memory is bounded by that cache and one object's users (nothing of the difference is kept but
// counts). The work
// runs in slices of about 10 ms between which the event loop runs; the stream stops at `signal`.

import { nextTurn } from '../../../domain/turn.js';
import type { Assertion } from '../../../domain/types.js';
import type { IndexSnapshot } from '../../../index/snapshot.js';
import type { TupleView } from '../../../index/types.js';
import { diffModels } from '../../../model/diff.js';
import type { CompiledModel } from '../../../model/types.js';
import type { EvalContext } from '../semantics/context.js';
import { assertionLine } from './assertions.js';
import { MemberSets } from './members.js';
import { objectLines, sideOf, userTypes, type Side } from './pairs.js';
import { isPlainUnion, planRelations, type PlannedRelation } from './plan.js';
import { RejectedTally } from './rejected.js';
import type { ImpactLine, RejectReason } from '../../contract.js';

interface ImpactWorld {
  readonly snapshot: IndexSnapshot;
  /** The query instant (tuple expiry). */
  readonly now: number;
  readonly base: CompiledModel;
  readonly candidate: CompiledModel;
  readonly resolveDepth: number;
  readonly sampleSize: number;
  /** The base model's assertions, or undefined when not asked for. */
  readonly assertions: readonly Assertion[] | undefined;
  /** Objects evaluated between two progress lines. */
  readonly progressEvery?: number | undefined;
}

const SLICE_MS = 10;
/**
 * The member sets' cache bound (./members.ts): 64 MB of ids and entries, whatever the store's
 * size; what it cannot hold is computed again when needed.
 */
const MEMBER_CACHE_BYTES = 64 * 1024 * 1024;
const REASONS: readonly RejectReason[] = [
  'type_removed',
  'relation_removed',
  'restriction_removed',
  'condition_removed',
  'condition_required',
  'condition_changed',
];

/** Yields the event loop every SLICE_MS of work; false once the stream should stop. */
class Pacer {
  private start = Date.now();
  constructor(private readonly signal: AbortSignal | undefined) {}
  async pause(): Promise<boolean> {
    if (Date.now() - this.start < SLICE_MS) return !this.signal?.aborted;
    await nextTurn();
    this.start = Date.now();
    return !this.signal?.aborted;
  }
}

/** Objects `type:id` the snapshot knows (as object or user), wildcards excluded, in id order. */
function* objectsOf(snapshot: IndexSnapshot, type: string): Generator<string> {
  const tid = snapshot.nameId(type);
  if (tid === undefined) return;
  for (let n = 0; n < snapshot.nodeCount; n++) {
    if (snapshot.nodeType(n) !== tid) continue;
    const s = snapshot.nodeOf(n);
    if (!s.endsWith(':*')) yield s;
  }
}

function countObjects(snapshot: IndexSnapshot, type: string): number {
  let n = 0;
  for (const _ of objectsOf(snapshot, type)) n++;
  return n;
}

function* structuralLines(
  base: CompiledModel,
  candidate: CompiledModel,
  plan: readonly PlannedRelation[],
): Generator<ImpactLine> {
  const d = diffModels(base, candidate);
  for (const type of d.typesAdded) yield { kind: 'type_added', type };
  for (const type of d.typesRemoved) yield { kind: 'type_removed', type };
  for (const [kind, list] of [
    ['relation_added', d.relationsAdded],
    ['relation_removed', d.relationsRemoved],
    ['relation_changed', d.relationsChanged],
  ] as const)
    for (const r of list) yield { kind, object_type: r.type, relation: r.relation, before: r.before, after: r.after };
  for (const [kind, list] of [
    ['condition_added', d.conditionsAdded],
    ['condition_removed', d.conditionsRemoved],
    ['condition_changed', d.conditionsChanged],
  ] as const)
    for (const condition of list) yield { kind, condition };
  for (const p of plan)
    if (p.contextIn.length > 0)
      yield {
        kind: 'context_dependent',
        object_type: p.summary.object_type,
        relation: p.summary.relation,
        models: p.contextIn,
      };
}

/** The impact lines; pins the snapshot for the stream's life. */
export async function* impactLines(w: ImpactWorld, signal?: AbortSignal): AsyncGenerator<ImpactLine> {
  w.snapshot.pin();
  try {
    yield* run(w, signal);
  } finally {
    w.snapshot.unpin();
  }
}

/** Tallies the stored tuples of every relation whose restrictions differ; false when stopped. */
async function scanTuples(w: ImpactWorld, view: TupleView, tally: RejectedTally, pacer: Pacer): Promise<boolean> {
  for (const [type, def] of w.base.types) {
    const relations = [...def.relations.keys()].filter((r) => tally.mayDiffer(type, r));
    if (relations.length === 0) continue;
    for (const object of objectsOf(w.snapshot, type)) {
      for (const r of relations) for (const t of view.users(object, r)) tally.add(t);
      if (!(await pacer.pause())) return false;
    }
  }
  return true;
}

async function* run(w: ImpactWorld, signal: AbortSignal | undefined): AsyncGenerator<ImpactLine> {
  const pacer = new Pacer(signal);
  const plan = planRelations(w.base, w.candidate);
  yield* structuralLines(w.base, w.candidate, plan);
  const view = w.snapshot.at(w.now);
  const tally = new RejectedTally(w.base, w.candidate, w.sampleSize);
  if (!(await scanTuples(w, view, tally, pacer))) return;
  for (const reason of REASONS) {
    const count = tally.counts.get(reason);
    if (count) yield { kind: 'rejected_tuples', reason, count, sample: tally.samples.get(reason) ?? [] };
  }
  const ctx = (model: CompiledModel): EvalContext => ({
    model,
    view,
    resolveDepth: w.resolveDepth,
    deadline: Number.POSITIVE_INFINITY,
  });
  const base = ctx(w.base);
  const candidate = ctx(w.candidate);
  const types = userTypes(w.base, w.candidate);
  const evaluated = plan.filter((p) => p.summary.evaluated).map((p) => p.summary);
  const counts = new Map<string, number>();
  for (const s of evaluated) {
    if (!counts.has(s.object_type)) counts.set(s.object_type, countObjects(w.snapshot, s.object_type));
    s.objects = counts.get(s.object_type) ?? 0;
  }
  const total = evaluated.reduce((n, s) => n + s.objects, 0);
  const every = w.progressEvery ?? 1000;
  let done = 0;
  yield { kind: 'progress', evaluated: 0, total };
  // Relations whose closure is identical in both models (not evaluated) share their sets.
  const unchanged = new Set(
    plan.filter((p) => !p.summary.evaluated).map((p) => `${p.summary.object_type}#${p.summary.relation}`),
  );
  const fast = new MemberSets(
    w.snapshot,
    view,
    w.base,
    w.candidate,
    (t, r) => unchanged.has(`${t}#${r}`),
    types,
    w.resolveDepth,
    MEMBER_CACHE_BYTES,
  );
  for (const s of evaluated) {
    const side = (c: EvalContext): Side =>
      sideOf(c, w.snapshot, w.now, isPlainUnion(c.model, s.object_type, s.relation), types);
    const [a, b] = [side(base), side(candidate)];
    for (const object of objectsOf(w.snapshot, s.object_type)) {
      yield* objectLines(a, b, types, object, s, fast);
      if (++done % every === 0) yield { kind: 'progress', evaluated: done, total };
      if (!(await pacer.pause())) return;
    }
  }
  if (done % every !== 0) yield { kind: 'progress', evaluated: done, total };
  let changed = 0;
  for (const a of w.assertions ?? []) {
    const line = assertionLine({ view, resolveDepth: w.resolveDepth }, w.base, w.candidate, a);
    if (line) {
      changed++;
      yield line;
    }
    if (!(await pacer.pause())) return;
  }
  const sum = (f: 'gained' | 'lost' | 'undetermined'): number => plan.reduce((n, p) => n + p.summary[f], 0);
  yield {
    kind: 'summary',
    base_authorization_model_id: w.base.id,
    revision: w.snapshot.revision,
    gained: sum('gained'),
    lost: sum('lost'),
    undetermined: sum('undetermined'),
    rejected_tuples: tally.total,
    assertions_run: w.assertions?.length ?? 0,
    assertions_changed: changed,
    relations: plan.map((p) => p.summary),
  };
}
