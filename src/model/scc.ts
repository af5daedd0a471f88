// Strongly connected components of a small directed graph (Tarjan's algorithm, iterative so a
// chain of thousands of relations cannot overflow the stack). Model validation and the walker's
// reach sets use it to do whole-model graph work in one linear pass instead of one walk per
// relation, which made a 2,000-relation model cost seconds on the event loop.
// Example: edges 0→1, 1→0, 1→2 → components [2] then [0, 1] (sinks first).

/**
 * Components of the graph with nodes `0..n-1` and successors `next(i)`, in reverse topological
 * order: every component comes after all the components it has edges into.
 */
export function components(n: number, next: (node: number) => readonly number[]): number[][] {
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const out: number[][] = [];
  const frames: { node: number; succ: readonly number[]; at: number }[] = [];
  let counter = 0;
  const open = (v: number): void => {
    index[v] = low[v] = counter++;
    stack.push(v);
    onStack[v] = 1;
    frames.push({ node: v, succ: next(v), at: 0 });
  };
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    open(root);
    while (frames.length > 0) {
      const f = frames[frames.length - 1] as (typeof frames)[number];
      if (f.at < f.succ.length) {
        const w = f.succ[f.at++] as number;
        if (index[w] === -1) open(w);
        else if (onStack[w]) low[f.node] = Math.min(low[f.node] as number, index[w] as number);
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low[parent.node] = Math.min(low[parent.node] as number, low[f.node] as number);
      if (low[f.node] !== index[f.node]) continue;
      const comp: number[] = [];
      let w: number;
      do {
        w = stack.pop() as number;
        onStack[w] = 0;
        comp.push(w);
      } while (w !== f.node);
      out.push(comp);
    }
  }
  return out;
}
