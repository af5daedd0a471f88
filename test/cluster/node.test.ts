// PlacementNode over an in-memory registry (the PostgreSQL one is exercised by placement.test.ts):
// a store moves to a new owner without a gap — the old owner keeps answering until the new one
// has loaded it and two heartbeats have passed — and with no node able to answer, route says none.
import { describe, expect, it, vi } from 'vitest';
import { PlacementNode, type HoldingEngine } from '../../src/cluster/node.js';
import { owners, placement } from '../../src/cluster/rendezvous.js';
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
  settleMs: 0,
  log: () => undefined,
});

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));
const SIX = ['S1', 'S2', 'S3', 'S4', 'S5', 'S6'];

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

  it('on a fresh cluster waits one settle time before loading its stores, a queried one at once', async () => {
    const registry = new MemoryRegistry(['S1', 'S2']);
    const engine = new Engine();
    let now = 1000;
    const a = new PlacementNode({ ...opts(registry, engine, 'a'), settleMs: 500, clock: () => now });
    await a.started;
    await settle();
    expect(engine.loaded.size).toBe(0);
    expect(a.ready()).toBe(false);
    // A request meanwhile loads its store (K = 1, a owns both).
    expect(a.route('S1', false)).toEqual({ kind: 'local' });
    await settle();
    expect([...engine.loaded]).toEqual(['S1']);
    now = 1500;
    await a.beat();
    await settle();
    expect([...engine.loaded].sort()).toEqual(['S1', 'S2']);
    await a.beat();
    expect(a.ready()).toBe(true);
    // A node joining a cluster that already holds stores loads at once.
    const eb = new Engine();
    const b = new PlacementNode({ ...opts(registry, eb, 'b'), settleMs: 500, clock: () => now });
    await b.started;
    await settle();
    const bOwns = ['S1', 'S2'].filter(
      (s) =>
        owners(
          s,
          [
            { nodeId: 'a', capacity: 1 },
            { nodeId: 'b', capacity: 1 },
          ],
          1,
        )[0] === 'b',
    );
    expect([...eb.loaded].sort()).toEqual(bOwns);
    await a.stop();
    await b.stop();
  });

  it('counts the settle wait again from each membership change seen while settling', async () => {
    const registry = new MemoryRegistry(SIX);
    const ea = new Engine();
    let now = 1000;
    const a = new PlacementNode({ ...opts(registry, ea, 'a'), settleMs: 500, clock: () => now });
    await a.started;
    // b registers 400 ms later (still fresh: it holds nothing): a waits until 500 ms after that.
    now = 1400;
    const eb = new Engine();
    const b = new PlacementNode({ ...opts(registry, eb, 'b'), settleMs: 500, clock: () => now });
    await b.started;
    await a.beat();
    now = 1600;
    await a.beat();
    await settle();
    expect(ea.loaded.size).toBe(0);
    now = 1900;
    await a.beat();
    await b.beat();
    await settle();
    // Each loads its share of the two-node membership, nothing it would hand off.
    const placed = placement(
      SIX,
      [
        { nodeId: 'a', capacity: 1 },
        { nodeId: 'b', capacity: 1 },
      ],
      1,
    );
    const share = (n: string): string[] => SIX.filter((s) => placed.get(s)?.[0] === n);
    expect(share('a').length).toBeGreaterThan(0);
    expect([...ea.loaded].sort()).toEqual(share('a'));
    expect([...eb.loaded].sort()).toEqual(share('b'));
    await a.stop();
    await b.stop();
  });

  it('loads first the stores the fewest live nodes serve', async () => {
    const stores = Array.from({ length: 40 }, (_, i) => `S${i}`);
    const registry = new MemoryRegistry(stores);
    // b reports half of the stores ready: a (K = 2, so a owns all) loads the other half first.
    registry.rows.set('b', {
      nodeId: 'b',
      url: 'http://b',
      capacity: 1,
      draining: false,
      leaseLeftMs: 3_600_000,
      ready: stores.slice(0, 20),
      loading: [],
    });
    const order: string[] = [];
    const engine = new Engine(true);
    const hold = engine.holdStore.bind(engine);
    engine.holdStore = (id: string) => (order.push(id), hold(id));
    const a = new PlacementNode({ ...opts(registry, engine, 'a'), replicas: 2, loadConcurrency: 1 });
    await a.started;
    // One load at a time: each finishes when the test opens it, and the next one starts.
    for (let opened = 0; opened < stores.length; opened++) {
      // The next load starts one event-loop turn after the last one ended.
      await vi.waitFor(() => expect(order.length).toBe(opened + 1));
      engine.open(order[opened] as string);
      await settle();
    }
    expect(order.length).toBe(40);
    expect(new Set(order.slice(0, 20))).toEqual(new Set(stores.slice(20)));
    await a.stop();
  });

  it('renews its lease while loads run, and starts no new load while its own renewal is overdue', async () => {
    const stores = ['S1', 'S2', 'S3'];
    let beats = 0;
    let gate: Promise<void> | undefined;
    let release: () => void = () => undefined;
    const registry = new MemoryRegistry(stores);
    const heartbeat = registry.heartbeat.bind(registry);
    registry.heartbeat = async (b: ClusterHeartbeat) => {
      beats++;
      if (gate) await gate;
      return heartbeat(b);
    };
    const order: string[] = [];
    const engine = new Engine(true);
    const hold = engine.holdStore.bind(engine);
    engine.holdStore = (id: string) => (order.push(id), hold(id));
    let now = 1_000_000;
    const lease = 3_600_000;
    const a = new PlacementNode({ ...opts(registry, engine, 'a'), loadConcurrency: 1, clock: () => now });
    await a.started;
    await vi.waitFor(() => expect(order).toHaveLength(1));
    // Renewals go on while the load runs (it never ends until the test says so).
    for (let i = 0; i < 3; i++) await a.beat();
    expect(beats).toBe(4);
    expect([...(registry.rows.get('a')?.loading ?? [])].sort()).toEqual(stores);
    // The next renewal hangs past half a lease: the load that ends meanwhile starts no other.
    gate = new Promise<void>((r) => (release = r));
    now += lease / 2 + 1;
    const late = a.beat();
    now += lease / 2;
    engine.open(order[0] as string);
    await vi.waitFor(() => expect(a.status().loadsDeferred).toBeGreaterThan(0));
    expect(order).toHaveLength(1);
    expect(a.status().loading).toBe(2);
    // Once the renewal answers, loading resumes.
    gate = undefined;
    release();
    await late;
    await vi.waitFor(() => expect(order).toHaveLength(2));
    engine.open(order[1] as string);
    await vi.waitFor(() => expect(order).toHaveLength(3));
    engine.open(order[2] as string);
    await vi.waitFor(() => expect(engine.loaded.size).toBe(3));
    // The gap between the two renewals around the hang is what the node reports.
    expect(a.status().renewalGapMaxMs).toBe(lease / 2 + 1);
    await a.stop();
  });

  it("heartbeats when another member's lease lapses, not a third of a lease later", async () => {
    const registry = new MemoryRegistry(['S1']);
    const engine = new Engine();
    registry.rows.set('b', {
      nodeId: 'b',
      url: 'http://b',
      capacity: 1,
      draining: false,
      leaseLeftMs: 30, // b stops renewing: its lease lapses in 30 ms
      ready: [],
      loading: [],
    });
    const a = new PlacementNode(opts(registry, engine, 'a'));
    await a.started;
    expect(a.status().members).toBe(2);
    registry.rows.set('b', { ...(registry.rows.get('b') as ClusterMember), leaseLeftMs: 0 });
    // No regular heartbeat comes for an hour; the lapse wakes the node.
    await vi.waitFor(() => expect(a.status().members).toBe(1));
    await a.stop();
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
