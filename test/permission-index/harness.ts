// Shared pieces of the permission index tests: a service with a store and a model, a stream
// consumer that folds ReadExpansions events into a set, and the oracle set recomputed through
// ListUsers over every object.

import { openLatch, type LatchOptions } from '../../src/engine/service.js';
import type { ExpansionStreamEvent, Latch } from '../../src/engine/contract.js';
import { dslToModel } from '../../src/model/dsl.js';

export interface Fixture {
  readonly latch: Latch;
  readonly storeId: string;
  readonly modelId: string;
}

export async function fixture(dsl: string, options: LatchOptions = {}): Promise<Fixture> {
  const latch = await openLatch(options);
  const storeId = (await latch.createStore('pi')).id;
  const modelId = await latch.writeModel(storeId, dslToModel(dsl));
  return { latch, storeId, modelId };
}

/** Resolves once the index is ACTIVE (or rejects when it FAILED), awaiting each build turn. */
export async function active(f: Fixture, indexId: string): Promise<void> {
  for (;;) {
    const info = await f.latch.getPermissionIndex(f.storeId, indexId);
    if (info.status === 'ACTIVE') return;
    if (info.status === 'FAILED') throw new Error(`index failed: ${info.reason ?? ''}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export const tripleKey = (user: string, relation: string, object: string): string => `${object}#${relation}@${user}`;

/** A ReadExpansions stream folded from empty: INSERT adds, DELETE removes; waits by freshness revision. */
export class Folded {
  readonly set = new Set<string>();
  readonly ids: string[] = [];
  revision = -1;
  closed: string | undefined;
  /** Every problem the fold saw (an INSERT of a present triple, a DELETE of an absent one). */
  readonly problems: string[] = [];
  private wake: (() => void) | undefined;
  readonly done: Promise<void>;

  constructor(events: AsyncIterable<ExpansionStreamEvent>) {
    this.done = this.run(events);
  }

  private async run(events: AsyncIterable<ExpansionStreamEvent>): Promise<void> {
    for await (const e of events) {
      if (e.kind === 'expansion') {
        const k = tripleKey(e.event.user, e.event.relation, e.event.object);
        if (e.snapshot === undefined) this.ids.push(`${e.event.revision}.${e.event.position}`);
        if (e.event.operation === 'INSERT') {
          if (this.set.has(k)) this.problems.push(`INSERT of present ${k} at ${e.event.revision}`);
          this.set.add(k);
        } else {
          if (!this.set.delete(k)) this.problems.push(`DELETE of absent ${k} at ${e.event.revision}`);
        }
      } else if (e.kind === 'freshness') this.revision = e.revision;
      else if (e.kind === 'closed') this.closed = e.reason;
      this.wake?.();
    }
    this.wake?.();
  }

  /** Resolves once a freshness event at `revision` or later arrived. */
  async reach(revision: number): Promise<void> {
    while (this.revision < revision && this.closed === undefined) {
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

/** The whole current set through ListUsers (filter `user`) over every listed object and relation. */
export async function oracle(
  f: Fixture,
  objects: readonly string[],
  relations: readonly { object_type: string; relation: string }[],
  userTypes: readonly string[],
): Promise<Set<string>> {
  const out = new Set<string>();
  for (const object of objects) {
    const [type, id] = object.split(':') as [string, string];
    for (const r of relations) {
      if (r.object_type !== type) continue;
      for (const ut of userTypes) {
        const res = await f.latch.listUsers({
          storeId: f.storeId,
          object: { type, id },
          relation: r.relation,
          userFilters: [{ type: ut }],
          contextualTuples: [],
          consistency: 'MINIMIZE_LATENCY',
        });
        for (const u of res.users) {
          if ('object' in u) out.add(tripleKey(`${u.object.type}:${u.object.id}`, r.relation, object));
          else if ('wildcard' in u) out.add(tripleKey(`${u.wildcard.type}:*`, r.relation, object));
        }
      }
    }
  }
  return out;
}

/** The current set as a fresh stream's initial snapshot (up to its first freshness event). */
export async function snapshotSet(f: Fixture, indexId: string): Promise<Set<string>> {
  const out = new Set<string>();
  const ac = new AbortController();
  for await (const e of f.latch.expansions(
    { storeId: f.storeId, indexId, modelId: f.modelId, heartbeatMs: 1000, lifetimeMs: 60_000 },
    ac.signal,
  )) {
    if (e.kind === 'expansion') out.add(tripleKey(e.event.user, e.event.relation, e.event.object));
    if (e.kind === 'freshness') break;
  }
  ac.abort();
  return out;
}

export function diff(a: Set<string>, b: Set<string>): string[] {
  const out: string[] = [];
  for (const x of a) if (!b.has(x)) out.push(`+${x}`);
  for (const x of b) if (!a.has(x)) out.push(`-${x}`);
  return out.sort();
}
