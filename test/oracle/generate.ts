// Seeded random models, tuples and queries for the differential test. Models are built in JSON
// form from every rewrite shape (this with plain / wildcard / userset / conditioned restrictions,
// computed, tuple-to-userset, union, intersection, difference) and must pass validateModel;
// recursion goes through userset restrictions and `from` only (computed references point to
// earlier relations, so computed-only cycles - invalid models - are never generated).

import type {
  AuthorizationModelInput,
  JsonObject,
  RelationReferenceJson,
  TupleKey,
  TypeDefinitionJson,
  UsersetJson,
} from '../../src/domain/types.js';

/** mulberry32: a small, fast, seedable PRNG. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

export const OBJECT_TYPES = ['doc', 'folder', 'group'];
export const USER_TYPES = ['user', 'bot'];
const CONDITIONS = {
  small: { name: 'small', expression: 'x < 5', parameters: { x: { type_name: 'TYPE_NAME_INT' as const } } },
  both: {
    name: 'both',
    expression: 'x < 5 || y < 5',
    parameters: { x: { type_name: 'TYPE_NAME_INT' as const }, y: { type_name: 'TYPE_NAME_INT' as const } },
  },
};

interface RelPlan {
  name: string;
  rewrite: UsersetJson;
  types: RelationReferenceJson[];
}

/** Shape weights: `wildcards` draws typed wildcard restrictions more often (ListUsers' set rules). */
export interface ModelBias {
  readonly wildcards?: boolean | undefined;
}

function restriction(rng: Rng, rels: Map<string, string[]>, bias: ModelBias): RelationReferenceJson {
  const k = bias.wildcards && rng.chance(0.4) ? 4 : rng.int(10);
  const cond = rng.chance(0.2) ? { condition: rng.pick(['small', 'both']) } : {};
  if (k < 4) return { type: rng.pick(USER_TYPES), ...cond };
  if (k < 6)
    return { type: rng.chance(0.6) ? 'user' : rng.pick([...USER_TYPES, ...OBJECT_TYPES]), wildcard: {}, ...cond };
  const t = rng.pick(OBJECT_TYPES);
  const rs = rels.get(t) ?? [];
  return rs.length > 0 ? { type: t, relation: rng.pick(rs), ...cond } : { type: 'user' };
}

function leaf(rng: Rng, earlier: string[], parentRels: string[], allowThis: boolean): UsersetJson {
  const k = rng.int(10);
  if (allowThis && k < 4) return { this: {} };
  if (k < 7 && earlier.length > 0) return { computedUserset: { relation: rng.pick(earlier) } };
  if (parentRels.length > 0)
    return {
      tupleToUserset: { tupleset: { relation: 'parent' }, computedUserset: { relation: rng.pick(parentRels) } },
    };
  return earlier.length > 0 ? { computedUserset: { relation: rng.pick(earlier) } } : { this: {} };
}

/** A rewrite of depth ≤ 2; `this` appears at most once and only as the leftmost leaf. */
function rewrite(rng: Rng, earlier: string[], parentRels: string[]): UsersetJson {
  const k = rng.int(10);
  const first = leaf(rng, earlier, parentRels, true);
  if (k < 3) return first;
  const other = (): UsersetJson =>
    rng.chance(0.25) ? rewrite(rng, earlier, parentRels) : leaf(rng, earlier, parentRels, false);
  if (k < 6) return { union: { child: [first, other(), ...(rng.chance(0.3) ? [other()] : [])] } };
  if (k < 8) return { intersection: { child: [first, other()] } };
  return { difference: { base: first, subtract: other() } };
}

function hasThis(rw: UsersetJson): boolean {
  if (rw.this) return true;
  const kids =
    rw.union?.child ?? rw.intersection?.child ?? (rw.difference ? [rw.difference.base, rw.difference.subtract] : []);
  return kids.some(hasThis);
}

/** One candidate model; callers retry when validateModel rejects it (e.g. no entrypoint). */
export function randomModel(rng: Rng, bias: ModelBias = {}): AuthorizationModelInput {
  const counts = new Map(OBJECT_TYPES.map((t) => [t, 2 + rng.int(3)] as const));
  const names = new Map(
    OBJECT_TYPES.map((t) => [t, Array.from({ length: counts.get(t) ?? 2 }, (_, i) => `r${i}`)] as const),
  );
  const defs: TypeDefinitionJson[] = USER_TYPES.map((type) => ({ type, relations: {}, metadata: null }));
  for (const t of OBJECT_TYPES) {
    const parentTypes = OBJECT_TYPES.filter(() => rng.chance(0.5));
    const parentRels = [...new Set(parentTypes.flatMap((p) => names.get(p) ?? []))];
    const plans: RelPlan[] = [
      {
        name: 'parent',
        rewrite: { this: {} },
        types: parentTypes.map((p) => ({ type: p, ...(rng.chance(0.15) ? { condition: 'small' } : {}) })),
      },
    ];
    if (parentTypes.length === 0) plans[0] = { name: 'parent', rewrite: { this: {} }, types: [{ type: 'folder' }] };
    const own = names.get(t) ?? [];
    own.forEach((name, i) => {
      const rw = i === 0 ? { this: {} } : rewrite(rng, own.slice(0, i), parentTypes.length > 0 ? parentRels : []);
      const types = hasThis(rw) ? Array.from({ length: 1 + rng.int(3) }, () => restriction(rng, names, bias)) : [];
      plans.push({ name, rewrite: rw, types: i === 0 ? [{ type: 'user' }, ...types] : types });
    });
    defs.push({
      type: t,
      relations: Object.fromEntries(plans.map((p) => [p.name, p.rewrite])),
      metadata: {
        relations: Object.fromEntries(plans.map((p) => [p.name, { directly_related_user_types: dedupe(p.types) }])),
      },
    });
  }
  return { schema_version: '1.1', type_definitions: defs, conditions: CONDITIONS };
}

function dedupe(xs: RelationReferenceJson[]): RelationReferenceJson[] {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const k = JSON.stringify(x);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export const ids = ['1', '2', '3'];

/** Every user string the generator draws from: objects, wildcards, usersets. */
export function randomUser(rng: Rng, model: AuthorizationModelInput): string {
  const k = rng.int(10);
  if (k < 4) return `${rng.pick(USER_TYPES)}:${rng.pick(ids)}`;
  if (k < 5) return `${rng.pick(rng.chance(0.7) ? USER_TYPES : OBJECT_TYPES)}:*`;
  const t = rng.pick(OBJECT_TYPES);
  const rels = Object.keys(model.type_definitions.find((d) => d.type === t)?.relations ?? {});
  if (k < 6) return `${t}:${rng.pick(ids)}`;
  return `${t}:${rng.pick(ids)}#${rng.pick(rels)}`;
}

export function randomRelation(rng: Rng, model: AuthorizationModelInput, type: string): string {
  return rng.pick(Object.keys(model.type_definitions.find((d) => d.type === type)?.relations ?? {}));
}

/** A random tuple over the model's vocabulary (not necessarily valid for it). */
export function randomTuple(rng: Rng, model: AuthorizationModelInput): TupleKey {
  const type = rng.pick(OBJECT_TYPES);
  const relation = randomRelation(rng, model, type);
  const user = relation === 'parent' ? `${rng.pick(OBJECT_TYPES)}:${rng.pick(ids)}` : randomUser(rng, model);
  const k = rng.int(10);
  const condition =
    k < 2
      ? { name: 'small' }
      : k < 3
        ? { name: 'small', context: { x: rng.int(8) } as JsonObject }
        : k < 4
          ? { name: 'both' }
          : undefined;
  return { object: `${type}:${rng.pick(ids)}`, relation, user, ...(condition ? { condition } : {}) };
}

/** A tuple drawn from one of the model's own restrictions (valid unless the restriction is a userset on itself). */
export function fittingTuple(rng: Rng, model: AuthorizationModelInput): TupleKey | undefined {
  const def = rng.pick(model.type_definitions.filter((d) => OBJECT_TYPES.includes(d.type)));
  const [relation, meta] = rng.pick(Object.entries(def.metadata?.relations ?? {}));
  const r = meta.directly_related_user_types ?? [];
  if (r.length === 0) return undefined;
  const d = rng.pick(r);
  const user = d.wildcard
    ? `${d.type}:*`
    : d.relation
      ? `${d.type}:${rng.pick(ids)}#${d.relation}`
      : `${d.type}:${rng.pick(ids)}`;
  const ctx = rng.chance(0.3) ? { context: { x: rng.int(8) } as JsonObject } : {};
  return {
    object: `${def.type}:${rng.pick(ids)}`,
    relation,
    user,
    ...(d.condition ? { condition: { name: d.condition, ...ctx } } : {}),
  };
}

export function randomContext(rng: Rng): JsonObject | undefined {
  const options: (JsonObject | undefined)[] = [undefined, {}, { x: 1 }, { x: 7 }, { x: 7, y: 1 }, { y: 9 }];
  return rng.pick(options);
}

/**
 * A later version of `model` for stale-tuple tests (§4.5): one restriction is removed, or one
 * restriction's condition is dropped or added. Callers validate it and keep the old model if invalid.
 */
export function evolveModel(rng: Rng, model: AuthorizationModelInput): AuthorizationModelInput {
  const next = JSON.parse(JSON.stringify(model)) as AuthorizationModelInput;
  const def = rng.pick(next.type_definitions.filter((d) => OBJECT_TYPES.includes(d.type)));
  const metas = Object.values(def.metadata?.relations ?? {}).filter(
    (m) => (m.directly_related_user_types ?? []).length > 0,
  );
  if (metas.length === 0) return next;
  const list = rng.pick(metas).directly_related_user_types ?? [];
  const i = rng.int(list.length);
  const entry = list[i];
  if (!entry) return next;
  if (list.length > 1 && rng.chance(0.5)) list.splice(i, 1);
  else if (entry.condition) delete entry.condition;
  else entry.condition = 'small';
  return next;
}
