// Which nodes own a store: weighted rendezvous (highest random weight) hashing over the live
// members, with bounded loads. A pure function of (store ids, members, K), so every node that read
// the same rows computes the same owners, with no coordination.
//
// Each (node, store) pair gets a score -capacity / ln(u), u uniform in (0, 1) from a hash of the
// pair: a store's preferred owners are the K highest scores, and in expectation a node is
// preferred for a share of the stores proportional to its capacity. Preference alone is only
// proportional on average (100 stores, K = 2, 5 nodes: the heaviest node held 49 where 40 is the
// share), and a node's memory follows its count, so `placement` also bounds it: a node holds at
// most ceil(K·S · capacity/Σcapacity · (1 + ε)) stores (S stores, ε = BOUND_SLACK). Pairs are
// granted in one global order, highest score first, each while its store still needs an owner and
// its node is under its bound; so a store goes to its preferred nodes unless they are full, and
// what a full node sheds are its lowest-scored pairs. A join or a leave changes the pairs granted
// near the bounds only: the mover's own share plus a few displaced pairs (tested).

/** A member as placement sees it: its id and its weight (`--capacity`). */
export interface PlacementMember {
  readonly nodeId: string;
  readonly capacity: number;
}

/**
 * ε of the bound: a node holds at most (1 + ε) times its capacity's share of the K·S copies.
 * Smaller evens memory out more and moves more stores on a join or leave; 0.05 keeps the heaviest
 * of 5 nodes at 42 of 100 stores (K = 2) where pure rendezvous gave up to 49.
 */
export const BOUND_SLACK = 0.05;

/** FNV-1a's state after the string's UTF-16 units, from `h`. */
function fnv(s: string, h: number): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** murmur3's finaliser: every input bit reaches every output bit. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const SEED_HI = 0x811c9dc5;
const SEED_LO = 0x9e3779b9;

/**
 * A uniform number in (0, 1) of the (node, store) pair, from the two FNV-1a states of the store id
 * (`hi`, `lo`: `storeState`) continued over a separator and the node id, then finalised: 52 bits.
 * A store's states are computed once and reused for every node.
 */
function uniformFrom(hi: number, lo: number, nodeId: string): number {
  const a = fmix(fnv(nodeId, Math.imul(hi ^ 0, 0x01000193))) >>> 6; // 26 bits
  const b = fmix(fnv(nodeId, Math.imul(lo ^ 0, 0x01000193))) >>> 6; // 26 bits
  return (a * 67_108_864 + b + 0.5) / 4_503_599_627_370_496; // 2^52: never 0 nor 1
}

/** A uniform number in (0, 1) of the (node, store) pair. */
function pairUniform(nodeId: string, storeId: string): number {
  return uniformFrom(fnv(storeId, SEED_HI), fnv(storeId, SEED_LO), nodeId);
}

/** The node's score for the store: higher wins; proportional to capacity in expectation. */
function score(member: PlacementMember, storeId: string): number {
  return -member.capacity / Math.log(pairUniform(member.nodeId, storeId));
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The store's preferred owners: the `k` members with the highest score, best first (fewer when
 * fewer members), bounds not applied (a store `placement` was not given, e.g. one created since
 * the last read of the store list). Ties (equal scores) fall to the smaller node id.
 */
export function owners(storeId: string, members: readonly PlacementMember[], k: number): string[] {
  const scored = members
    .filter((m) => m.capacity > 0)
    .map((m) => ({ id: m.nodeId, s: score(m, storeId) }))
    .sort((a, b) => b.s - a.s || byId(a.id, b.id));
  return scored.slice(0, Math.max(0, k)).map((m) => m.id);
}

/**
 * The most stores each member may hold when `stores` stores have `k` owners each: its capacity's
 * share of the k·stores copies, times 1 + `slack`, rounded up (never below 1 for a member with
 * capacity; never above `stores`).
 */
export function bounds(
  stores: number,
  members: readonly PlacementMember[],
  k: number,
  slack = BOUND_SLACK,
): Map<string, number> {
  let total = 0;
  for (const m of members) if (m.capacity > 0) total += m.capacity;
  const out = new Map<string, number>();
  for (const m of members)
    if (m.capacity > 0)
      out.set(m.nodeId, Math.min(stores, Math.max(1, Math.ceil(((k * stores * m.capacity) / total) * (1 + slack)))));
  return out;
}

/**
 * Every store's owners under `members`, best first, each member holding at most its bound
 * (`bounds`). Pairs are granted highest score first (ties: store id, then node id), so the result
 * depends only on the set of stores and members, not their order. The global order is a merge of
 * each store's own ranking (a heap of one entry per store, its next-best pair), so the work is
 * S·N scores plus about S·K heap steps, not a sort of S·N pairs. Should the bounds leave a store
 * short (only when nearly every member already owns it: K close to N), it takes its best-ranked
 * members with room, and past that its best-ranked others: every store gets min(K, members)
 * owners.
 */
export function placement(
  storeIds: Iterable<string>,
  members: readonly PlacementMember[],
  k: number,
  slack = BOUND_SLACK,
): Map<string, string[]> {
  const ids = [...new Set(storeIds)];
  const live = members.filter((m) => m.capacity > 0).sort((a, b) => byId(a.nodeId, b.nodeId));
  const n = live.length;
  const want = Math.min(Math.max(0, k), n);
  const out = new Map<string, string[]>();
  for (const id of ids) out.set(id, []);
  if (want === 0 || ids.length === 0) return out;
  const room = bounds(ids.length, live, want, slack);
  const left = live.map((m) => room.get(m.nodeId) ?? 0);
  // Each store's ranking: node indexes by score, best first (ties: the smaller node id, which is
  // the smaller index, since `live` is sorted by id).
  const scores = new Float64Array(ids.length * n);
  const rank = new Uint16Array(ids.length * n);
  const row = new Float64Array(n);
  const idx = Array.from({ length: n }, (_, j) => j);
  for (let s = 0; s < ids.length; s++) {
    const id = ids[s] as string;
    const hi = fnv(id, SEED_HI);
    const lo = fnv(id, SEED_LO);
    for (let j = 0; j < n; j++) {
      const m = live[j] as PlacementMember;
      row[j] = -m.capacity / Math.log(uniformFrom(hi, lo, m.nodeId));
      scores[s * n + j] = row[j] as number;
      idx[j] = j;
    }
    idx.sort((a, b) => (row[b] as number) - (row[a] as number) || a - b);
    for (let j = 0; j < n; j++) rank[s * n + j] = idx[j] as number;
  }
  // The merge: a max-heap of stores keyed by their next pair's score (ties: store id), each with
  // its position in its ranking.
  const pos = new Uint16Array(ids.length);
  const key = (s: number): number => scores[s * n + (rank[s * n + (pos[s] as number)] as number)] as number;
  const before = (a: number, b: number): boolean => {
    const d = key(a) - key(b);
    return d > 0 || (d === 0 && byId(ids[a] as string, ids[b] as string) < 0);
  };
  const heap = Array.from({ length: ids.length }, (_, s) => s);
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) return;
      const r = l + 1;
      const c = r < heap.length && before(heap[r] as number, heap[l] as number) ? r : l;
      if (!before(heap[c] as number, heap[i] as number)) return;
      [heap[c], heap[i]] = [heap[i] as number, heap[c] as number];
      i = c;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  const short: number[] = [];
  while (heap.length > 0) {
    const s = heap[0] as number;
    const list = out.get(ids[s] as string) as string[];
    const j = rank[s * n + (pos[s] as number)] as number;
    if ((left[j] as number) > 0) {
      list.push((live[j] as PlacementMember).nodeId);
      left[j] = (left[j] as number) - 1;
    }
    pos[s] = (pos[s] as number) + 1;
    if (list.length < want && (pos[s] as number) < n) {
      down(0);
      continue;
    }
    if (list.length < want) short.push(s);
    const last = heap.pop() as number;
    if (heap.length > 0) {
      heap[0] = last;
      down(0);
    }
  }
  /** Stores whose owners `handOver` changed: their lists are put back in score order below. */
  const moved = new Set<number>();
  /**
   * Frees a place at full member `j`: the first store it owns (by store id, so that the result
   * does not depend on the order of `storeIds`) that a member with room does not own passes to
   * the best-ranked such member. False when none can.
   */
  let byStoreId: number[] | undefined;
  const handOver = (j: number): boolean => {
    const from = (live[j] as PlacementMember).nodeId;
    byStoreId ??= ids.map((_, i) => i).sort((a, b) => byId(ids[a] as string, ids[b] as string));
    for (const y of byStoreId) {
      const owners = out.get(ids[y] as string) as string[];
      const at = owners.indexOf(from);
      if (at === -1) continue;
      for (let r = 0; r < n; r++) {
        const t = rank[y * n + r] as number;
        const to = (live[t] as PlacementMember).nodeId;
        if ((left[t] as number) <= 0 || owners.includes(to)) continue;
        owners[at] = to;
        left[t] = (left[t] as number) - 1;
        left[j] = (left[j] as number) + 1;
        moved.add(y);
        return true;
      }
    }
    return false;
  };
  // The remainder: best-ranked non-owners with room; else a full non-owner that hands one of its
  // stores to a member with room (`handOver`), so every bound still holds; past that (no such
  // exchange exists) best-ranked non-owners over their bound.
  for (const s of short) {
    const list = out.get(ids[s] as string) as string[];
    for (let pass = 0; pass < 3; pass++)
      for (let r = 0; r < n && list.length < want; r++) {
        const j = rank[s * n + r] as number;
        const m = live[j] as PlacementMember;
        if (list.includes(m.nodeId)) continue;
        if (pass === 0 && (left[j] as number) <= 0) continue;
        if (pass === 1 && ((left[j] as number) > 0 || !handOver(j))) continue;
        list.push(m.nodeId);
        left[j] = (left[j] as number) - 1;
      }
  }
  for (const s of moved) if (!short.includes(s)) short.push(s);
  // Best first: the grants came in score order, except the remainder's.
  for (const s of short) {
    const list = out.get(ids[s] as string) as string[];
    const sc = (id: string): number => scores[s * n + live.findIndex((m) => m.nodeId === id)] as number;
    list.sort((a, b) => sc(b) - sc(a) || byId(a, b));
  }
  return out;
}
