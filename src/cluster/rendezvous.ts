// Which nodes own a store: weighted rendezvous (highest random weight) hashing over the live
// members. A pure function of (store id, members, K), so every node that read the same
// membership rows computes the same owners, with no coordination. Each (node, store) pair gets a
// score -capacity / ln(u), u uniform in (0, 1) from a hash of the pair; a store's owners are the
// K highest scores. A node joining takes only the stores it now scores into the top K of (≈ K/N
// of them, weighted by its capacity), a node leaving gives up only its own; no other store moves.

/** A member as placement sees it: its id and its weight (`--capacity`). */
export interface PlacementMember {
  readonly nodeId: string;
  readonly capacity: number;
}

/** FNV-1a over the string's UTF-16 units from `seed`, then murmur3's finaliser. */
function hash32(s: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uniform number in (0, 1) of the (node, store) pair: 52 bits from two independent hashes. */
export function pairUniform(nodeId: string, storeId: string): number {
  const key = `${nodeId}\u0000${storeId}`;
  const hi = hash32(key, 0x811c9dc5) >>> 6; // 26 bits
  const lo = hash32(key, 0x9e3779b9) >>> 6; // 26 bits
  return (hi * 67_108_864 + lo + 0.5) / 4_503_599_627_370_496; // 2^52: never 0 nor 1
}

/** The node's score for the store: higher wins; proportional to capacity in expectation. */
export function score(member: PlacementMember, storeId: string): number {
  return -member.capacity / Math.log(pairUniform(member.nodeId, storeId));
}

/**
 * The store's owners: the `k` members with the highest score, best first (fewer when fewer
 * members). Ties (equal scores) fall to the smaller node id, so the order is total.
 */
export function owners(storeId: string, members: readonly PlacementMember[], k: number): string[] {
  const scored = members
    .filter((m) => m.capacity > 0)
    .map((m) => ({ id: m.nodeId, s: score(m, storeId) }))
    .sort((a, b) => b.s - a.s || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return scored.slice(0, Math.max(0, k)).map((m) => m.id);
}

/** Every store's owners under `members` (the map a node keeps until the membership changes). */
export function placement(
  storeIds: Iterable<string>,
  members: readonly PlacementMember[],
  k: number,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const id of storeIds) out.set(id, owners(id, members, k));
  return out;
}
