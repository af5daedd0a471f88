// String ↔ u32 interning for one store: names (types, relations, condition names), nodes
// (objects `T:id` and wildcards `T:*`, each with its type in a shared u32 array the walker reads),
// and condition bindings (name + stored context + expiry → id, the JS-side table of conditioned
// or expiring tuples; the walker reads each binding's condition name and expiry from shared memory).
// Interning happens at the edge, once per tuple or request string; ids are never reused.

import type { JsonObject, RelationshipCondition } from '../domain/types.js';
import { MAX_CONDS, MAX_NAMES, NO_COND_NAME, WILDCARD_BIT } from '../abi.js';
import { Region, u32 } from './memory.js';
import { NodeTable } from './node-table.js';
import { SharedNodeTable, sharingNodeTables } from './shared-nodes.js';

/** A growable u32 array in shared memory; growth copies into a new Region (old readers keep theirs). */
class SharedU32 {
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

/** A tuple's condition and expiry; `name` is '' when the tuple only expires. */
interface ConditionBinding {
  readonly name: string;
  readonly context?: JsonObject | undefined;
  /** `expires_at` in ms since the epoch: from that instant the tuple grants nothing. */
  readonly expiresAt?: number | undefined;
}

/** The ms instant of a stored `expires_at` (RFC 3339, validated when written), undefined when absent. */
export function expiryMs(expiresAt: string | undefined): number | undefined {
  if (expiresAt === undefined) return undefined;
  const ms = Date.parse(expiresAt);
  return Number.isFinite(ms) ? ms : undefined;
}

export class StoreDictionary {
  readonly names = new Map<string, number>();
  readonly nameList: string[] = [];
  readonly nodeList: string[] = [];
  /** Node string → id (`nodeList` is its inverse). */
  readonly nodes: NodeTable | SharedNodeTable;
  /** The same table when it lives in shared memory (HTTP threads read it), else undefined. */
  readonly shared: SharedNodeTable | undefined;
  /** Node id → type name id | WILDCARD_BIT. */
  readonly nodeTypes: SharedU32;
  private readonly condKeys = new Map<string, number>();
  /** Condition binding id → binding; id 0 = unconditioned. */
  readonly conds: ConditionBinding[] = [{ name: '' }];
  /** Binding id → condition name id, NO_COND_NAME for an expiry without a condition (word 0 unused). */
  readonly condNames: SharedU32;
  /** Binding id → expiry in ms as a u64 (low word, high word), 0 = never. */
  readonly condExpiry: SharedU32;
  /**
   * Every binding's expiry (`nextExpiry`, `expiryEpoch`): an ascending array, plus up to 256 recent
   * ones unsorted (merged in when full: a load of 1M expiring tuples must not insert one by one).
   */
  private expiries: number[] = [];
  private pendingExpiries: number[] = [];

  constructor(nodeCapacity = 1024) {
    this.shared = sharingNodeTables() ? new SharedNodeTable(this.nodeList, nodeCapacity) : undefined;
    this.nodes = this.shared ?? new NodeTable(this.nodeList, nodeCapacity);
    this.nodeTypes = new SharedU32(nodeCapacity);
    this.condNames = new SharedU32(16);
    this.condNames.push(0);
    this.condExpiry = new SharedU32(32);
    this.condExpiry.push(0);
    this.condExpiry.push(0);
  }

  name(s: string): number {
    let id = this.names.get(s);
    if (id === undefined) {
      id = this.nameList.length;
      if (id >= MAX_NAMES)
        throw new RangeError(`latch: more than ${MAX_NAMES} distinct type/relation names in one store`);
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
      this.nodeList.push(s);
      this.nodes.add(s, id);
      this.nodeTypes.push(s.length === colon + 2 && s.endsWith('*') ? (type | WILDCARD_BIT) >>> 0 : type);
    }
    return id;
  }

  /**
   * Binding id of a tuple's condition and expiry (0 when it has neither); identical name + context
   * + expiry share one id. Example: cond(undefined, 1.7e12) → a binding that only expires.
   */
  cond(c: RelationshipCondition | undefined, expiresAt?: number): number {
    if (!c && expiresAt === undefined) return 0;
    const hasCtx = c?.context !== undefined && Object.keys(c.context).length > 0;
    const base = !c ? '' : hasCtx ? `${c.name}\u0000${stableJson(c.context)}` : c.name;
    const key = expiresAt === undefined ? base : `${base}\u0001${expiresAt}`;
    let id = this.condKeys.get(key);
    if (id === undefined) {
      id = this.conds.length;
      if (id > MAX_CONDS)
        throw new RangeError(`latch: more than ${MAX_CONDS} distinct condition contexts in one store`);
      this.condKeys.set(key, id);
      const name = c?.name ?? '';
      this.conds.push({
        name,
        ...(hasCtx ? { context: c?.context } : {}),
        ...(expiresAt === undefined ? {} : { expiresAt }),
      });
      this.condNames.push(c ? this.name(c.name) : NO_COND_NAME);
      this.condExpiry.push(expiresAt === undefined ? 0 : expiresAt % 2 ** 32);
      this.condExpiry.push(expiresAt === undefined ? 0 : Math.floor(expiresAt / 2 ** 32));
      if (expiresAt !== undefined) this.noteExpiry(expiresAt);
    }
    return id;
  }

  private noteExpiry(ms: number): void {
    this.pendingExpiries.push(ms);
    if (this.pendingExpiries.length < 256) return;
    this.expiries = this.expiries.concat(this.pendingExpiries).sort((a, b) => a - b);
    this.pendingExpiries = [];
  }

  /** True once some binding carries an expiry. */
  get hasExpiries(): boolean {
    return this.expiries.length > 0 || this.pendingExpiries.length > 0;
  }

  /** The first binding expiry after `now` (ms), Infinity when none: answers may change then. */
  nextExpiry(now: number): number {
    const i = firstAbove(this.expiries, now);
    let next = i < this.expiries.length ? (this.expiries[i] as number) : Number.POSITIVE_INFINITY;
    for (const e of this.pendingExpiries) if (e > now && e < next) next = e;
    return next;
  }

  /**
   * How many binding expiries are at or before `now`. Bindings are only added with expiries after
   * the clock's present (writes refuse past ones), so for one snapshot two instants with equal
   * epochs see the same bindings expired: the result cache keys on it.
   */
  expiryEpoch(now: number): number {
    if (!this.hasExpiries) return 0;
    let n = firstAbove(this.expiries, now);
    for (const e of this.pendingExpiries) if (e <= now) n++;
    return n;
  }
}

/** Index of the first element of the ascending `a` greater than `v`. */
function firstAbove(a: readonly number[], v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** JSON with sorted object keys, so equal contexts share one binding. */
function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
    .join(',')}}`;
}
