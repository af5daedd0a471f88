// String ↔ u32 interning for one store: names (types, relations, condition names), nodes
// (objects `T:id` and wildcards `T:*`, each with its type in a shared u32 array the walker reads),
// and condition bindings (name + stored context → id, the JS-side table of conditioned tuples).
// Interning happens at the edge, once per tuple or request string; ids are never reused.

import type { JsonObject, RelationshipCondition } from '../domain/types.js';
import { MAX_CONDS, MAX_NAMES, WILDCARD_BIT } from '../abi.js';
import { Region, u32 } from './memory.js';

/** A growable u32 array in shared memory; growth copies into a new Region (old readers keep theirs). */
export class SharedU32 {
  region: Region;
  length = 0;
  constructor(capacity: number) {
    this.region = new Region(Math.max(capacity, 16) * 4);
  }
  push(v: number): void {
    if ((this.length + 1) * 4 > this.region.size) {
      const next = new Region(this.region.size * 2);
      const view = u32();
      view.copyWithin(next.ptr >>> 2, this.region.ptr >>> 2, (this.region.ptr >>> 2) + this.length);
      this.region.drop();
      this.region = next;
    }
    u32()[(this.region.ptr >>> 2) + this.length++] = v;
  }
  get(i: number): number {
    return u32()[(this.region.ptr >>> 2) + i] ?? 0;
  }
}

export interface ConditionBinding {
  readonly name: string;
  readonly context?: JsonObject | undefined;
}

export class StoreDictionary {
  readonly names = new Map<string, number>();
  readonly nameList: string[] = [];
  readonly nodes = new Map<string, number>();
  readonly nodeList: string[] = [];
  /** Node id → type name id | WILDCARD_BIT. */
  readonly nodeTypes: SharedU32;
  private readonly condKeys = new Map<string, number>();
  /** Condition binding id → binding; id 0 = unconditioned. */
  readonly conds: ConditionBinding[] = [{ name: '' }];
  /** Binding id → condition name id (word 0 unused). */
  readonly condNames: SharedU32;

  constructor(nodeCapacity = 1024) {
    this.nodeTypes = new SharedU32(nodeCapacity);
    this.condNames = new SharedU32(16);
    this.condNames.push(0);
  }

  name(s: string): number {
    let id = this.names.get(s);
    if (id === undefined) {
      id = this.nameList.length;
      if (id >= MAX_NAMES) throw new RangeError(`latch: more than ${MAX_NAMES} distinct type/relation names in one store`);
      this.names.set(s, id);
      this.nameList.push(s);
    }
    return id;
  }

  /** Node id of an object or wildcard string `T:id` / `T:*` (interned). */
  node(s: string): number {
    let id = this.nodes.get(s);
    if (id === undefined) {
      const colon = s.indexOf(':');
      const type = this.name(s.slice(0, colon));
      id = this.nodeList.length;
      this.nodes.set(s, id);
      this.nodeList.push(s);
      this.nodeTypes.push(s.length === colon + 2 && s.endsWith('*') ? (type | WILDCARD_BIT) >>> 0 : type);
    }
    return id;
  }

  /** Binding id of a tuple condition (0 when none); identical name + context share one id. */
  cond(c: RelationshipCondition | undefined): number {
    if (!c) return 0;
    const key = c.context && Object.keys(c.context).length > 0 ? `${c.name}\u0000${stableJson(c.context)}` : c.name;
    let id = this.condKeys.get(key);
    if (id === undefined) {
      id = this.conds.length;
      if (id > MAX_CONDS) throw new RangeError(`latch: more than ${MAX_CONDS} distinct condition contexts in one store`);
      this.condKeys.set(key, id);
      const hasCtx = c.context && Object.keys(c.context).length > 0;
      this.conds.push(hasCtx ? { name: c.name, context: c.context } : { name: c.name });
      this.condNames.push(this.name(c.name));
    }
    return id;
  }
}

/** JSON with sorted object keys, so equal contexts share one binding. */
export function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`).join(',')}}`;
}
