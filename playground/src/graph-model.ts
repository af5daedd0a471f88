// The model as a graph: one node per type and per relation, one edge per way a relation is fed
// (direct type restriction, computed userset, tuple-to-userset), tagged with the operator it sits
// under (union, intersection, exclusion). Pure data; graph.ts draws it.

import type { ModelJson, RelationRef, Userset } from './types.js';

export type EdgeKind = 'direct' | 'computed' | 'ttu';
export type EdgeOp = 'or' | 'and' | 'but not';

export interface Edge {
  /** `type` or `type#relation`. */
  readonly from: string;
  /** `type#relation`. */
  readonly to: string;
  readonly kind: EdgeKind;
  readonly op: EdgeOp;
  /** The tupleset relation of a tuple-to-userset edge. */
  readonly via?: string;
}

export interface GraphType {
  readonly name: string;
  readonly relations: { name: string; rewrite: string }[];
}

export interface ModelGraph {
  readonly types: GraphType[];
  readonly edges: Edge[];
  /** Column of each type: types a type depends on sit in lower columns where cycles allow. */
  readonly layer: Map<string, number>;
}

function refText(r: RelationRef): string {
  const base = r.wildcard ? `${r.type}:*` : r.relation ? `${r.type}#${r.relation}` : r.type;
  return r.condition ? `${base} with ${r.condition}` : base;
}

/** The rewrite in DSL form: `[user, group#member] or owner or viewer from parent`. */
export function rewriteText(u: Userset, direct: readonly RelationRef[], top = true): string {
  if (u.this) return `[${direct.map(refText).join(', ')}]`;
  if (u.computedUserset) return u.computedUserset.relation;
  if (u.tupleToUserset)
    return `${u.tupleToUserset.computedUserset.relation} from ${u.tupleToUserset.tupleset.relation}`;
  const wrap = (s: string): string => (top ? s : `(${s})`);
  if (u.union) return wrap(u.union.child.map((c) => rewriteText(c, direct, false)).join(' or '));
  if (u.intersection) return wrap(u.intersection.child.map((c) => rewriteText(c, direct, false)).join(' and '));
  if (u.difference)
    return wrap(
      `${rewriteText(u.difference.base, direct, false)} but not ${rewriteText(u.difference.subtract, direct, false)}`,
    );
  return '?';
}

function directOf(model: ModelJson, type: string, relation: string): RelationRef[] {
  return (
    model.type_definitions.find((t) => t.type === type)?.metadata?.relations?.[relation]?.directly_related_user_types ??
    []
  );
}

export function buildGraph(model: ModelJson): ModelGraph {
  const types: GraphType[] = [];
  const edges: Edge[] = [];
  const relationsOf = new Map(model.type_definitions.map((t) => [t.type, new Set(Object.keys(t.relations ?? {}))]));
  for (const t of model.type_definitions) {
    const rels: GraphType['relations'] = [];
    for (const [name, rw] of Object.entries(t.relations ?? {})) {
      const direct = directOf(model, t.type, name);
      rels.push({ name, rewrite: rewriteText(rw, direct) });
      const to = `${t.type}#${name}`;
      const visit = (u: Userset, op: EdgeOp): void => {
        if (u.this)
          for (const r of direct)
            edges.push({ from: r.relation ? `${r.type}#${r.relation}` : r.type, to, kind: 'direct', op });
        else if (u.computedUserset)
          edges.push({ from: `${t.type}#${u.computedUserset.relation}`, to, kind: 'computed', op });
        else if (u.tupleToUserset) {
          const ts = u.tupleToUserset.tupleset.relation;
          const c = u.tupleToUserset.computedUserset.relation;
          // The tupleset's tuples feed it too: they name the parents.
          edges.push({ from: `${t.type}#${ts}`, to, kind: 'ttu', op, via: ts });
          for (const p of directOf(model, t.type, ts)) {
            if (relationsOf.get(p.type)?.has(c)) edges.push({ from: `${p.type}#${c}`, to, kind: 'ttu', op, via: ts });
          }
        } else if (u.union) for (const c of u.union.child) visit(c, op);
        else if (u.intersection) for (const c of u.intersection.child) visit(c, 'and');
        else if (u.difference) {
          visit(u.difference.base, op);
          visit(u.difference.subtract, 'but not');
        }
      };
      visit(rw, 'or');
    }
    types.push({ name: t.type, relations: rels });
  }
  return { types, edges, layer: layers(types, edges) };
}

/** Longest path from the types nothing feeds, ignoring edges that close a cycle. */
function layers(types: readonly GraphType[], edges: readonly Edge[]): Map<string, number> {
  const deps = new Map<string, Set<string>>(types.map((t) => [t.name, new Set()]));
  for (const e of edges) {
    const a = e.from.split('#')[0] as string;
    const b = e.to.split('#')[0] as string;
    if (a !== b) deps.get(b)?.add(a);
  }
  const layer = new Map<string, number>();
  const onPath = new Set<string>();
  const visit = (t: string): number => {
    const known = layer.get(t);
    if (known !== undefined) return known;
    if (onPath.has(t)) return 0;
    onPath.add(t);
    let l = 0;
    for (const d of deps.get(t) ?? []) l = Math.max(l, visit(d) + 1);
    onPath.delete(t);
    layer.set(t, l);
    return l;
  };
  for (const t of types) visit(t.name);
  return layer;
}

/** Every node that feeds `node`, transitively, with the edges on the way. */
export function feeders(graph: ModelGraph, node: string): { nodes: Set<string>; edges: Set<Edge> } {
  const byTarget = new Map<string, Edge[]>();
  for (const e of graph.edges) {
    const list = byTarget.get(e.to) ?? [];
    list.push(e);
    byTarget.set(e.to, list);
  }
  const nodes = new Set<string>([node]);
  const used = new Set<Edge>();
  const queue = [node];
  while (queue.length) {
    const n = queue.pop() as string;
    for (const e of byTarget.get(n) ?? []) {
      used.add(e);
      if (!nodes.has(e.from)) {
        nodes.add(e.from);
        queue.push(e.from);
      }
    }
  }
  return { nodes, edges: used };
}
