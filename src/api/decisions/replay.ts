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
interface WhyStep {
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

/** A listing's result with its why chain: an object of ListObjects, or a user of ListUsers. */
interface ListedWhy {
  readonly object?: string | undefined;
  readonly user?: string | undefined;
  readonly reason: Reason;
}

/** The why chains of a listing decision: the first MAX_LISTED_WHYS results in answer order. */
interface ListedWhys {
  readonly results: readonly ListedWhy[];
  /** True when the answer held more results than were explained. */
  readonly truncated: boolean;
}

/** Results of a recorded listing explained at most (each is one explained Check). */
export const MAX_LISTED_WHYS = 50;

interface Replay {
  readonly decision: StoredDecision;
  readonly replayed: Record<string, unknown>;
  readonly equal: boolean;
  readonly tree?: TraceNode | undefined;
  readonly reason?: Reason | undefined;
  /** ListObjects, StreamedListObjects and ListUsers: each returned result's chain (bounded). */
  readonly whys?: ListedWhys | undefined;
}

/** A ListUsers result as the user string a Check takes: `type:id`, `type:id#relation` or `type:*`. */
function userOf(u: ListedUser): string {
  if ('object' in u) return `${u.object.type}:${u.object.id}`;
  if ('userset' in u) return `${u.userset.type}:${u.userset.id}#${u.userset.relation}`;
  return `${u.wildcard.type}:*`;
}

/** What a listing's explained checks share with it: the store, contextual tuples and context. */
interface ListingBase {
  readonly storeId: string;
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
}

/**
 * Each of the first MAX_LISTED_WHYS results explained as a Check of its tuple at the decision's
 * point, one after another (a bounded number of explained checks per request).
 * Example: ListObjects(user:bob, viewer, document) answered [document:a] → one chain for
 * (user:bob, viewer, document:a).
 */
async function listedWhys(
  latch: Latch,
  base: ListingBase,
  modelId: string,
  at: PastPoint,
  keys: readonly { readonly user: string; readonly relation: string; readonly object: string }[],
  as: 'object' | 'user',
): Promise<ListedWhys> {
  const results: ListedWhy[] = [];
  for (const k of keys.slice(0, MAX_LISTED_WHYS)) {
    const e = await explainAt(latch, { ...base, tupleKey: k }, modelId, at);
    results.push(as === 'object' ? { object: k.object, reason: reasonOf(e) } : { user: k.user, reason: reasonOf(e) });
  }
  return { results, truncated: keys.length > MAX_LISTED_WHYS };
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
  const explained = { storeId: base.storeId, contextualTuples: base.contextualTuples, context: base.context };
  if (d.operation === 'ListObjects' || d.operation === 'StreamedListObjects') {
    const user = String(r.user);
    const relation = String(r.relation);
    const q = { ...base, type: String(r.type), relation, user, page };
    const a = d.answer as { objects?: string[]; next?: string; truncated?: boolean };
    let objects: string[];
    let next: string | undefined;
    // A page of a resumable stream is the paged ListObjects' page.
    if (d.operation === 'ListObjects' || page !== undefined) ({ objects, next } = await latch.listObjects(q));
    else {
      objects = [];
      for await (const o of latch.streamedListObjects(q)) objects.push(o);
    }
    const replayed = next === undefined ? { objects } : { objects, next };
    // A truncated record holds the first MAX_STREAMED_OBJECTS objects sent: each must be replayed.
    const all = new Set(objects);
    const equal = a.truncated
      ? objects.length > (a.objects ?? []).length && (a.objects ?? []).every((o) => all.has(o))
      : sortedJson(objects) === sortedJson(a.objects ?? []) && next === a.next;
    const keys = (a.objects ?? []).map((object) => ({ user, relation, object }));
    const whys = await listedWhys(latch, explained, d.authorization_model_id, at, keys, 'object');
    return { decision: d, replayed, equal, whys };
  }
  if (d.operation === 'ListUsers') {
    const object = r.object as { type: string; id: string };
    const relation = String(r.relation);
    const userFilters = r.user_filters as UserFilter[];
    const out = await latch.listUsers({ ...base, object, relation, userFilters, page });
    const replayed = out.next === undefined ? { users: out.users } : { users: out.users, next: out.next };
    const a = d.answer as { users?: ListedUser[]; next?: string };
    const equal = sortedJson(out.users) === sortedJson(a.users ?? []) && out.next === a.next;
    const target = `${object.type}:${object.id}`;
    const keys = (a.users ?? []).map((u) => ({ user: userOf(u), relation, object: target }));
    const whys = await listedWhys(latch, explained, d.authorization_model_id, at, keys, 'user');
    return { decision: d, replayed, equal, whys };
  }
  const tupleKey = r.tuple_key as CheckTupleKey;
  const e = await explainAt(latch, { ...base, tupleKey }, d.authorization_model_id, at);
  const equal = e.allowed === (d.answer as { allowed?: boolean }).allowed;
  return { decision: d, replayed: { allowed: e.allowed }, equal, tree: e.tree, reason: reasonOf(e) };
}
