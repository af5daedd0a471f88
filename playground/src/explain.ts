// The "why" of a Check: the trace the reference evaluator returns from
// POST /stores/{id}/check/explain, shown as the chain that grants an allowed Check, or the tree of
// every branch tried for a denied one.

export interface TraceNode {
  /** relation: `object#relation` evaluated; the rewrite kinds; tuple: a stored or contextual tuple followed. */
  kind:
    'relation' | 'direct' | 'computed' | 'ttu' | 'union' | 'intersection' | 'exclusion' | 'tuple' | 'pruned' | 'cycle';
  label: string;
  outcome: 'allowed' | 'denied' | 'cycle' | 'error';
  error?: string;
  children?: TraceNode[];
}

export interface Explanation {
  allowed: boolean;
  tree: TraceNode;
}

/** The path from the root to the first node whose outcome is `error`: where a failed Check failed. */
export function failingPath(root: TraceNode): TraceNode[] {
  if (root.outcome !== 'error') return [];
  const path: TraceNode[] = [root];
  let n: TraceNode | undefined = root;
  while ((n = n.children?.find((c) => c.outcome === 'error'))) path.push(n);
  return path;
}

/** The first path of allowed nodes from the root: the chain of rewrites and tuples that grants it. */
export function grantingChain(root: TraceNode): TraceNode[] {
  const chain: TraceNode[] = [];
  let n: TraceNode | undefined = root;
  while (n && n.outcome === 'allowed') {
    chain.push(n);
    // An exclusion's children are [base, subtract]: only the base can be allowed when it grants.
    n = n.children?.find((c) => c.outcome === 'allowed');
  }
  return chain;
}
