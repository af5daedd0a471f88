// Replaying a recorded decision (docs/audit.md): the recorded request evaluated again at the
// recorded revision, instant and model through the past-revision queries, its answer compared
// with the recorded one, and — for a checked tuple — the "why" chain of the explanation. The
// AuthZEN `context.reason` (docs/authzen.md) is built from the same explanation.
// Example: a Check recorded `allowed: true` at revision 41 replays as an explain at
// `{revision: 41, time: <its instant>}` and answers `equal: true` with the granting chain.

import type { JsonObject, TupleKey } from '../../domain/types.js';
import type {
  CheckExplanation,
  CheckTupleKey,
  Evaluated,
  Latch,
  ListedUser,
  ListPageRequest,
  PastPoint,
  TraceNode,
  UserFilter,
} from '../../engine/contract.js';
import type { StoredDecision } from '../../storage/decisions.js';

/** One step of a why chain: a relation, a rewrite operator or the tuple that granted. */
export interface WhyStep {
  readonly kind: string;
  readonly label: string;
}

/** The explanation in the short form a caller reads: the granting chain, or what was tried. */
export interface Reason {
  readonly allowed: boolean;
  /** Root to granting tuple (allowed); empty when denied. */
  readonly chain: readonly WhyStep[];
  /** Denied: the branches of the top relation and their outcomes. */
  readonly tried?: readonly (WhyStep & { readonly outcome: string })[] | undefined;
}

/** The path of allowed nodes from the root down to the tuple that granted. */
export function reasonOf(e: Pick<CheckExplanation, 'allowed' | 'tree'>): Reason {
  if (!e.allowed) {
    const tried = (e.tree.children ?? []).map((c) => ({ kind: c.kind, label: c.label, outcome: c.outcome }));
    return { allowed: false, chain: [], tried };
  }
  const chain: WhyStep[] = [];
  let n: TraceNode | undefined = e.tree;
  while (n && n.outcome === 'allowed') {
    chain.push({ kind: n.kind, label: n.label });
    n = n.children?.find((c) => c.outcome === 'allowed');
  }
  return { allowed: true, chain };
}

/** The point a live answer read: its revision, judged at its instant (or at `fallback` when it read no clock). */
export function pointOf(e: Evaluated, fallback: number): PastPoint {
  return { revision: e.revision ?? 0, time: e.instant || fallback };
}

/** A checked tuple explained at the revision and instant a live Check read. */
export function explainAt(
  latch: Latch,
  q: {
    readonly storeId: string;
    readonly tupleKey: CheckTupleKey;
    readonly contextualTuples: readonly TupleKey[];
    readonly context?: JsonObject | undefined;
  },
  modelId: string,
  at: PastPoint,
): Promise<CheckExplanation> {
  return latch.explainCheck({ ...q, modelId, consistency: 'MINIMIZE_LATENCY', at });
}

export interface Replay {
  readonly decision: StoredDecision;
  readonly replayed: Record<string, unknown>;
  readonly equal: boolean;
  readonly tree?: TraceNode | undefined;
  readonly reason?: Reason | undefined;
}

const sortedJson = (items: readonly unknown[]): string => JSON.stringify(items.map((i) => JSON.stringify(i)).sort());

function contextual(r: Record<string, unknown>): readonly TupleKey[] {
  return (r.contextual_tuples as TupleKey[] | undefined) ?? [];
}

function context(r: Record<string, unknown>): JsonObject | undefined {
  return (r.context as JsonObject | null | undefined) ?? undefined;
}

/** Evaluates `d`'s request again exactly as it was made and compares the answers. */
export async function replay(latch: Latch, d: StoredDecision): Promise<Replay> {
  const at = pointOf(d, Date.parse(d.timestamp));
  const r = d.request;
  const base = {
    storeId: d.store_id,
    modelId: d.authorization_model_id,
    contextualTuples: contextual(r),
    context: context(r),
    consistency: 'MINIMIZE_LATENCY' as const,
    at,
  };
  const page = (r.page as ListPageRequest | null | undefined) ?? undefined;
  if (d.operation === 'ListObjects') {
    const q = { ...base, type: String(r.type), relation: String(r.relation), user: String(r.user), page };
    const out = await latch.listObjects(q);
    const replayed = out.next === undefined ? { objects: out.objects } : { objects: out.objects, next: out.next };
    const a = d.answer as { objects?: string[]; next?: string };
    const equal = sortedJson(out.objects) === sortedJson(a.objects ?? []) && out.next === a.next;
    return { decision: d, replayed, equal };
  }
  if (d.operation === 'ListUsers') {
    const object = r.object as { type: string; id: string };
    const userFilters = r.user_filters as UserFilter[];
    const out = await latch.listUsers({ ...base, object, relation: String(r.relation), userFilters, page });
    const replayed = out.next === undefined ? { users: out.users } : { users: out.users, next: out.next };
    const a = d.answer as { users?: ListedUser[]; next?: string };
    const equal = sortedJson(out.users) === sortedJson(a.users ?? []) && out.next === a.next;
    return { decision: d, replayed, equal };
  }
  const tupleKey = r.tuple_key as CheckTupleKey;
  const e = await explainAt(latch, { ...base, tupleKey }, d.authorization_model_id, at);
  const equal = e.allowed === (d.answer as { allowed?: boolean }).allowed;
  return { decision: d, replayed: { allowed: e.allowed }, equal, tree: e.tree, reason: reasonOf(e) };
}
