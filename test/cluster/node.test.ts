// PlacementNode over an in-memory registry (the PostgreSQL one is exercised by placement.test.ts):
// a store moves to a new owner without a gap — the old owner keeps answering until the new one
// has loaded it and two heartbeats have passed — and with no node able to answer, route says none.
import { describe, expect, it } from 'vitest';
import { PlacementNode, type HoldingEngine } from '../../src/cluster/node.js';
import { owners } from '../../src/cluster/rendezvous.js';
import type { ClusterHeartbeat, ClusterMember, ClusterRegistry } from '../../src/storage/types.js';

class MemoryRegistry implements ClusterRegistry {
  readonly rows = new Map<string, ClusterMember>();
  constructor(readonly stores: string[]) {}
  heartbeat(b: ClusterHeartbeat): Promise<ClusterMember[]> {
    const draining = this.rows.get(b.nodeId)?.draining ?? false;
    this.rows.set(b.nodeId, { ...b, draining, leaseLeftMs: b.leaseMs });
    return this.members();
  }
  members(): Promise<ClusterMember[]> {
    return Promise.resolve([...this.rows.values()]);
  }
  storeIds(): Promise<string[]> {
    return Promise.resolve(this.stores);
  }
  drain(nodeId: string): Promise<boolean> {
    const m = this.rows.get(nodeId);
    if (m) this.rows.set(nodeId, { ...m, draining: true });
    return Promise.resolve(m !== undefined);
  }
  leave(nodeId: string): Promise<void> {
    this.rows.delete(nodeId);
    return Promise.resolve();
  }
}

/** An engine whose loads finish when the test says so. */
class Engine implements HoldingEngine {
  readonly loaded = new Set<string>();
  readonly released: string[] = [];
  private readonly gates = new Map<string, () => void>();
  constructor(private readonly gated = false) {}
  holdStore(id: string): Promise<void> {
    if (!this.gated) return Promise.resolve(void this.loaded.add(id));
    return new Promise((resolve) => this.gates.set(id, () => resolve(void this.loaded.add(id))));
  }
  open(id: string): void {
    this.gates.get(id)?.();
  }
  releaseStore(id: string): void {
    this.loaded.delete(id);
    this.released.push(id);
  }
  heldStores() {
    return [...this.loaded].map((storeId) => ({ storeId, tuples: 0, bytes: 0 }));
  }
}

const opts = (registry: ClusterRegistry, engine: HoldingEngine, nodeId: string) => ({
  registry,
  engine,
  nodeId,
  url: `http://${nodeId}`,
  capacity: 1,
  replicas: 1,
  leaseMs: 3_600_000, // heartbeats are driven by the test
  log: () => undefined,
});

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('PlacementNode', () => {
  it('moves a store without a gap: the old owner answers until the new one is ready, two heartbeats on', async () => {
    // A store that B owns once it joins (K = 1).
    const store = Array.from({ length: 100 }, (_, i) => `S${i}`).find(
      (s) =>
        owners(
          s,
          [
            { nodeId: 'a', capacity: 1 },
            { nodeId: 'b', capacity: 1 },
          ],
          1,
        )[0] === 'b',
    ) as string;
    const registry = new MemoryRegistry([store]);
    const ea = new Engine();
    const a = new PlacementNode(opts(registry, ea, 'a'));
    await a.started;
    await settle();
    expect(ea.loaded.has(store)).toBe(true);
    await a.beat();
    expect(a.route(store, false)).toEqual({ kind: 'local' });
    expect(a.ready()).toBe(true);

    const eb = new Engine(true);
    const b = new PlacementNode(opts(registry, eb, 'b'));
    await b.started;
    await a.beat();
    // B owns it and is loading it: B forwards to A, A keeps answering.
    expect(b.ready()).toBe(false);
    expect(b.route(store, false)).toEqual({ kind: 'forward', peers: [expect.objectContaining({ nodeId: 'a' })] });
    expect(a.route(store, false)).toEqual({ kind: 'local' });
    eb.open(store);
    await settle();
    await b.beat();
    expect(b.ready()).toBe(true);
    expect(b.route(store, false)).toEqual({ kind: 'local' });
    // A sees B ready, and releases only two heartbeats later.
    await a.beat();
    await a.beat();
    expect(ea.released).toEqual([]);
    expect(a.route(store, false)).toEqual({ kind: 'local' });
    await a.beat();
    expect(ea.released).toEqual([store]);
    expect(a.route(store, false)).toEqual({ kind: 'forward', peers: [expect.objectContaining({ nodeId: 'b' })] });
    // A forwarded request is always answered where it arrives (never forwarded twice).
    expect(a.route(store, true)).toEqual({ kind: 'local' });
    await a.stop();
    await b.stop();
    expect(registry.rows.size).toBe(0);
  });

  it('says none when no live node can answer the store', async () => {
    const registry = new MemoryRegistry(['S1']);
    const engine = new Engine();
    const a = new PlacementNode(opts(registry, engine, 'a'));
    await a.started;
    await registry.drain('a');
    await a.beat();
    expect(a.route('S2', false)).toEqual({ kind: 'none' });
    await a.stop();
  });
});
