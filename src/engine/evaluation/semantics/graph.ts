// Reverse edges of a compiled model, for walking from a subject towards the objects that may
// include it (ListObjects), and the type-graph reachability test ListUsers uses to answer early.
// Only "positive" positions of a rewrite produce edges: every child of union/intersection and
// the base of a difference (a subtract branch can never grant membership).
//
// Example: `document.viewer: [group#member] or editor` yields
//   direct 'group#member' → document#viewer, computed 'document#editor' → document#viewer.

import type { CompiledModel, Rewrite } from '../../../model/types.js';

interface RelationRef {
  readonly type: string;
  readonly relation: string;
}

interface TtuEdge extends RelationRef {
  readonly tupleset: string;
}

export interface ReverseGraph {
  /** key `U`, `U:*` or `U#S` → relations whose `this` accepts that user form. */
  readonly direct: ReadonlyMap<string, readonly RelationRef[]>;
  /** key `T#S` → relations `T#r` whose rewrite computes `S`. */
  readonly computed: ReadonlyMap<string, readonly RelationRef[]>;
  /** key `P#X` → relations `T#r` with `X from Y` where `Y` accepts plain `P`. */
  readonly ttu: ReadonlyMap<string, readonly TtuEdge[]>;
}

function add<V>(map: Map<string, V[]>, key: string, v: V): void {
  const list = map.get(key);
  if (list) list.push(v);
  else map.set(key, [v]);
}

/** The leaves of `rw` that can grant membership. */
export function positiveLeaves(rw: Rewrite, out: Rewrite[] = []): Rewrite[] {
  switch (rw.kind) {
    case 'union':
    case 'intersection':
      for (const c of rw.children) positiveLeaves(c, out);
      break;
    case 'difference':
      positiveLeaves(rw.base, out);
      break;
    default:
      out.push(rw);
  }
  return out;
}

const cache = new WeakMap<CompiledModel, ReverseGraph>();

export function reverseGraph(model: CompiledModel): ReverseGraph {
  const hit = cache.get(model);
  if (hit) return hit;
  const direct = new Map<string, RelationRef[]>();
  const computed = new Map<string, RelationRef[]>();
  const ttu = new Map<string, TtuEdge[]>();
  for (const [type, def] of model.types) {
    for (const [relation, rel] of def.relations) {
      const ref = { type, relation };
      for (const leaf of positiveLeaves(rel.rewrite)) {
        if (leaf.kind === 'this') {
          const forms = new Set(
            rel.directTypes.map((d) => (d.wildcard ? `${d.type}:*` : d.relation ? `${d.type}#${d.relation}` : d.type)),
          );
          for (const f of forms) add(direct, f, ref);
        } else if (leaf.kind === 'computed') {
          add(computed, `${type}#${leaf.relation}`, ref);
        } else if (leaf.kind === 'ttu') {
          const parents = new Set(
            (def.relations.get(leaf.tupleset)?.directTypes ?? [])
              .filter((d) => !d.wildcard && !d.relation)
              .map((d) => d.type),
          );
          for (const p of parents) add(ttu, `${p}#${leaf.computed}`, { type, relation, tupleset: leaf.tupleset });
        }
      }
    }
  }
  const g = { direct, computed, ttu };
  cache.set(model, g);
  return g;
}

/** Every `T#r` whose membership can flow into `type#relation` (forward reachability, positive positions). */
export function relevantRelations(model: CompiledModel, type: string, relation: string): Set<string> {
  const seen = new Set<string>();
  const stack: [string, string][] = [[type, relation]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [t, r] = item;
    const key = `${t}#${r}`;
    const rel = model.types.get(t)?.relations.get(r);
    if (seen.has(key) || !rel) continue;
    seen.add(key);
    for (const leaf of positiveLeaves(rel.rewrite)) {
      if (leaf.kind === 'this') {
        for (const d of rel.directTypes) if (d.relation !== undefined) stack.push([d.type, d.relation]);
      } else if (leaf.kind === 'computed') stack.push([t, leaf.relation]);
      else if (leaf.kind === 'ttu') {
        for (const d of model.types.get(t)?.relations.get(leaf.tupleset)?.directTypes ?? [])
          stack.push([d.type, leaf.computed]);
      }
    }
  }
  return seen;
}

/**
 * Whether every relation in `relevant` (`relevantRelations` of a query) is a union of direct
 * types, computed usersets and tuple-to-usersets (no `and`, no `but not`). Then a target a
 * forward or reverse walk reaches is reached along a simple path of valid tuples whose conditions
 * are met, fewer hops than the depth limit: Check follows that same path (its ancestors are the
 * path's nodes, so no cycle cuts it; memoised results are path-independent) and unions make it
 * TRUE whatever else errs, so confirming it would only repeat the walk (ListObjects' indexed walk,
 * ListUsers' expansion). Not where one tuple key can occur twice (contextual tuples): a contextual
 * copy of a key hides the stored copy in Check's exact lookup (§5.8), which the walks do not model.
 */
export function unionOnly(model: CompiledModel, relevant: ReadonlySet<string>): boolean {
  const plain = (rw: Rewrite): boolean =>
    rw.kind === 'this' ||
    rw.kind === 'computed' ||
    rw.kind === 'ttu' ||
    (rw.kind === 'union' && rw.children.every(plain));
  for (const key of relevant) {
    const hash = key.indexOf('#');
    const rel = model.types.get(key.slice(0, hash))?.relations.get(key.slice(hash + 1));
    if (rel && !plain(rel.rewrite)) return false;
  }
  return true;
}

/**
 * Whether the type graph has any path from the filter (`U` or `U#S`) to `type#relation`
 * through positive rewrite positions. Used by ListUsers to answer `[]` without reading tuples.
 */
export function hasPossibleEdges(
  model: CompiledModel,
  type: string,
  relation: string,
  filterType: string,
  filterRelation?: string,
): boolean {
  const seen = new Set<string>();
  const visit = (t: string, r: string): boolean => {
    const key = `${t}#${r}`;
    if (seen.has(key)) return false;
    seen.add(key);
    if (filterRelation !== undefined && t === filterType && r === filterRelation) return true;
    const rel = model.types.get(t)?.relations.get(r);
    if (!rel) return false;
    for (const leaf of positiveLeaves(rel.rewrite)) {
      if (leaf.kind === 'this') {
        for (const d of rel.directTypes) {
          if (d.relation === undefined && filterRelation === undefined && d.type === filterType) return true;
          if (d.relation !== undefined && visit(d.type, d.relation)) return true;
        }
      } else if (leaf.kind === 'computed') {
        if (visit(t, leaf.relation)) return true;
      } else if (leaf.kind === 'ttu') {
        for (const d of model.types.get(t)?.relations.get(leaf.tupleset)?.directTypes ?? []) {
          if (
            d.relation === undefined &&
            !d.wildcard &&
            model.types.get(d.type)?.relations.has(leaf.computed) &&
            visit(d.type, leaf.computed)
          )
            return true;
        }
      }
    }
    return false;
  };
  return visit(type, relation);
}

/** Labels each relation node points to: `U`, `U:*` terminals and `T#r` relation nodes (all rewrite positions). */
function edgesOf(model: CompiledModel, type: string, relation: string): string[] {
  const out: string[] = [];
  const rel = model.types.get(type)?.relations.get(relation);
  const visit = (rw: Rewrite): void => {
    if (rw.kind === 'this') {
      for (const d of rel?.directTypes ?? [])
        out.push(d.wildcard ? `${d.type}:*` : d.relation === undefined ? d.type : `${d.type}#${d.relation}`);
    } else if (rw.kind === 'computed') out.push(`${type}#${rw.relation}`);
    else if (rw.kind === 'ttu') {
      for (const d of model.types.get(type)?.relations.get(rw.tupleset)?.directTypes ?? []) {
        if (model.types.get(d.type)?.relations.has(rw.computed)) out.push(`${d.type}#${rw.computed}`);
      }
    } else if (rw.kind === 'difference') [rw.base, rw.subtract].forEach(visit);
    else rw.children.forEach(visit);
  };
  if (rel) visit(rel.rewrite);
  return out;
}

const reach = new WeakMap<CompiledModel, Map<string, Set<string>>>();

/**
 * Whether the type graph has a path from the subject's form to `type#relation` (§5.2 step 4,
 * the reference's PathExists): from `U` or `U:*` for an object `U:i`, from `U#S` for a userset,
 * from `U:*` for a wildcard. Every rewrite position counts, subtract branches included.
 * Example: `doc.viewer: [group#member]`, `group.member: [bot]` → no path from `user` to doc#viewer.
 */
export function pathExists(model: CompiledModel, subject: string, type: string, relation: string): boolean {
  let table = reach.get(model);
  if (!table) {
    table = new Map();
    reach.set(model, table);
  }
  const key = `${type}#${relation}`;
  let labels = table.get(key);
  if (!labels) {
    labels = new Set<string>();
    const stack = [key];
    for (let l = stack.pop(); l !== undefined; l = stack.pop()) {
      if (labels.has(l)) continue;
      labels.add(l);
      const hash = l.indexOf('#');
      if (hash !== -1) stack.push(...edgesOf(model, l.slice(0, hash), l.slice(hash + 1)));
    }
    table.set(key, labels);
  }
  const colon = subject.indexOf(':');
  const hash = subject.lastIndexOf('#');
  const utype = subject.slice(0, colon);
  if (hash > colon) return labels.has(`${utype}#${subject.slice(hash + 1)}`);
  return labels.has(utype) || labels.has(`${utype}:*`);
}
