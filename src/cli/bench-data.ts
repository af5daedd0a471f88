// Synthetic data for `latch bench`: tuples that respect a model's type restrictions, shaped by a
// small spec (objects per type, fan-out per relation, nesting depth), deterministic for a seed.
//
// Contract of the generator:
// - object ids are `<type>:<type>_<n>`, n in [0, count);
// - for every object and every directly assignable relation, `fanout` tuples are drawn from the
//   relation's type restrictions (conditioned restrictions are skipped: their context is unknown;
//   wildcards are used for about 1 object in 20);
// - a restriction that points back to the same type (folder parent, group member) only links an
//   object to one of a deeper level (level = n mod (depth + 1)), so nesting is at most `depth`
//   deep and never cyclic;
// - duplicates are dropped. The queries draw their subjects from the "leaf" user types (types
//   with no relations, like `user`), falling back to every type.

import type { AuthorizationModelInput, RelationReferenceJson, TupleKey } from '../domain/types.js';
import { UsageError } from './args.js';
import { FileFormatError, isObject } from './tuple-file.js';

export interface SyntheticSpec {
  /** Objects per type; types not listed get `defaultObjects`. */
  readonly objects: Record<string, number>;
  /** Tuples per object per relation, by `relation` or `type#relation`. */
  readonly fanout: Record<string, number>;
  readonly depth: number;
  readonly defaultObjects: number;
  readonly defaultFanout: number;
  readonly seed: number;
}

export const DEFAULT_SPEC: SyntheticSpec = {
  objects: {},
  fanout: {},
  depth: 3,
  defaultObjects: 100,
  defaultFanout: 2,
  seed: 1,
};

/** `type=N` pairs (from --objects / --fanout) → a record; throws UsageError on a bad pair. */
export function parsePairs(pairs: readonly string[], flag: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of pairs) {
    const m = /^([^=\s]+)=(\d+)$/.exec(p);
    if (!m) throw new UsageError(`${flag} takes name=N, got '${p}'`);
    out[m[1] as string] = Number(m[2]);
  }
  return out;
}

/** A YAML spec file: `{objects: {user: 1000}, fanout: {viewer: 3}, depth: 4, seed: 7}`. */
export function specFromYaml(data: unknown): Partial<SyntheticSpec> {
  if (!isObject(data)) throw new FileFormatError('bench spec: expected a map');
  const nums = (v: unknown, key: string): Record<string, number> => {
    if (v === undefined) return {};
    if (!isObject(v) || !Object.values(v).every((n) => Number.isInteger(n) && (n as number) >= 0))
      throw new FileFormatError(`bench spec: '${key}' must map names to integers`);
    return v as Record<string, number>;
  };
  const int = (v: unknown, key: string): number | undefined => {
    if (v === undefined) return undefined;
    if (!Number.isInteger(v) || (v as number) < 0)
      throw new FileFormatError(`bench spec: '${key}' must be a non-negative integer`);
    return v as number;
  };
  const spec: Record<string, unknown> = { objects: nums(data.objects, 'objects'), fanout: nums(data.fanout, 'fanout') };
  for (const k of ['depth', 'seed'] as const) if (data[k] !== undefined) spec[k] = int(data[k], k);
  return spec as Partial<SyntheticSpec>;
}

/** mulberry32: small, fast, deterministic. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function objectCount(spec: SyntheticSpec, type: string): number {
  return spec.objects[type] ?? spec.defaultObjects;
}

export function objectId(type: string, n: number): string {
  return `${type}:${type}_${n}`;
}

export function generateTuples(model: AuthorizationModelInput, spec: SyntheticSpec): TupleKey[] {
  const random = rng(spec.seed);
  const pick = (n: number) => Math.floor(random() * n);
  const out = new Map<string, TupleKey>();
  const levels = spec.depth + 1;
  for (const td of model.type_definitions) {
    const count = objectCount(spec, td.type);
    for (const [relation, meta] of Object.entries(td.metadata?.relations ?? {})) {
      const refs = (meta.directly_related_user_types ?? []).filter((r: RelationReferenceJson) => !r.condition);
      if (refs.length === 0) continue;
      const fanout = spec.fanout[`${td.type}#${relation}`] ?? spec.fanout[relation] ?? spec.defaultFanout;
      for (let n = 0; n < count; n++) {
        const level = n % levels;
        for (let k = 0; k < fanout; k++) {
          const ref = refs[pick(refs.length)] as RelationReferenceJson;
          const user = subject(ref, td.type, level, levels, spec, pick, random);
          if (user === undefined) continue;
          const key = { user, relation, object: objectId(td.type, n) };
          out.set(`${key.object}#${relation}@${user}`, key);
        }
      }
    }
  }
  return [...out.values()];
}

function subject(
  ref: RelationReferenceJson,
  ownType: string,
  level: number,
  levels: number,
  spec: SyntheticSpec,
  pick: (n: number) => number,
  random: () => number,
): string | undefined {
  if (ref.wildcard) return random() < 0.05 ? `${ref.type}:*` : undefined;
  const count = objectCount(spec, ref.type);
  if (count === 0) return undefined;
  let n = pick(count);
  if (ref.type === ownType) {
    // Same-type link: only to an object exactly one level deeper (none from the deepest level).
    if (level + 1 >= levels) return undefined;
    const candidates = Math.floor((count - (level + 1) - 1) / levels) + 1;
    if (count <= level + 1 || candidates <= 0) return undefined;
    n = level + 1 + levels * pick(candidates);
  }
  const id = objectId(ref.type, n);
  return ref.relation ? `${id}#${ref.relation}` : id;
}

/** Types used as query subjects: those without relations (plain users), else every type. */
export function subjectTypes(model: AuthorizationModelInput): string[] {
  const leaves = model.type_definitions.filter((t) => Object.keys(t.relations ?? {}).length === 0).map((t) => t.type);
  return leaves.length ? leaves : model.type_definitions.map((t) => t.type);
}

/** Every `type#relation` of the model (the query targets). */
export function relationPaths(model: AuthorizationModelInput): { type: string; relation: string }[] {
  return model.type_definitions.flatMap((t) =>
    Object.keys(t.relations ?? {}).map((relation) => ({ type: t.type, relation })),
  );
}

/**
 * Objects per type as they occur in `tuples` (as objects or as users), for drawing queries on
 * store-file data where ids are arbitrary.
 */
export function objectsByType(tuples: readonly TupleKey[]): Map<string, string[]> {
  const sets = new Map<string, Set<string>>();
  const add = (o: string) => {
    const bare = o.split('#')[0] as string;
    const i = bare.indexOf(':');
    if (i <= 0 || bare.endsWith(':*')) return;
    const type = bare.slice(0, i);
    if (!sets.has(type)) sets.set(type, new Set());
    sets.get(type)?.add(bare);
  };
  for (const t of tuples) {
    add(t.object);
    add(t.user);
  }
  return new Map([...sets].map(([k, v]) => [k, [...v]]));
}
