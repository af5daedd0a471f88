// One node of a placed cluster (`latch serve --placement`): renews its lease in the registry,
// reads the live members, loads the stores bounded-load rendezvous hashing gives it
// (./rendezvous.ts), drops a store only once every one of its new owners reports it ready (no
// gap), and answers the HTTP edge's question for each request: serve here, forward to these
// nodes, or nobody can (503).
//
// The lease comes first. The registry renews it on a connection of its own (never queued behind
// checkpoint reads on the storage pool), on this node's own timer (every third of a lease), and a
// load is started only while the last renewal is recent: a node whose renewal is overdue lets
// the event loop and the database answer it before it takes on more work, so its own lease does
// not lapse while it loads a dead member's stores (which would make the others re-place its
// stores in turn). Loads start one event-loop turn apart.

import type { HeldStore } from '../engine/contract.js';
import type { ClusterMember, ClusterRegistry } from '../storage/types.js';
import { owners, placement, type PlacementMember } from './rendezvous.js';

/** The engine operations placement drives (Latch has them). */
export interface HoldingEngine {
  holdStore(storeId: string): Promise<void>;
  releaseStore(storeId: string): void;
  heldStores(): HeldStore[];
}

interface PlacementOptions {
  readonly registry: ClusterRegistry;
  readonly engine: HoldingEngine;
  readonly nodeId: string;
  /** The URL the other nodes forward to. */
  readonly url: string;
  readonly capacity: number;
  /** Owners per store (K). */
  readonly replicas: number;
  /** Lease length; renewed every third of it. */
  readonly leaseMs: number;
  /** Stores loaded at once (default 2). */
  readonly loadConcurrency?: number | undefined;
  /**
   * On a fresh cluster (no other live member holds or loads a store at this node's first
   * heartbeat), how long the node waits before loading the stores it owns (default one lease),
   * counted again from each membership change seen while waiting: the nodes starting with it
   * register meanwhile, so it loads its share of the final membership, not stores it would hand
   * off a moment later (whose memory would stay with the process). A request for a store
   * meanwhile still loads it.
   */
  readonly settleMs?: number | undefined;
  /** The clock the settle wait reads (default Date.now). */
  readonly clock?: (() => number) | undefined;
  readonly log: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/** A node another one forwards to. */
export interface Peer {
  readonly nodeId: string;
  readonly url: string;
}

/** Where a request for a store goes: answered here, forwarded (to the first peer that answers), or refused. */
export type Route =
  | { readonly kind: 'local' }
  | { readonly kind: 'forward'; readonly peers: readonly Peer[] }
  | { readonly kind: 'none' };

/** Figures for metrics and `latch cluster status`. */
export interface PlacementStatus {
  /** Live members, this node included. */
  readonly members: number;
  readonly held: number;
  readonly loading: number;
  /** Every store this node owns is loaded. */
  readonly ready: boolean;
  /** The longest time between two successful lease renewals so far (ms). */
  readonly renewalGapMaxMs: number;
  /** Loads put off because this node's own renewal was overdue. */
  readonly loadsDeferred: number;
}

/** Whether two sorted id lists are equal. */
function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const LOCAL: Route = { kind: 'local' };
/** A lapse is looked for this long after the lease's end (the read and the database's clock step). */
const LAPSE_MARGIN_MS = 20;
const NONE: Route = { kind: 'none' };

export class PlacementNode {
  /** Live members (lease not lapsed), as of the last heartbeat. */
  private live: ClusterMember[] = [];
  /** Each live member's ready stores. */
  private readyAt = new Map<string, ReadonlySet<string>>();
  /** Owners of each store under the current membership and store list (recomputed when either changes). */
  private ownerCache = new Map<string, string[]>();
  private candidates: PlacementMember[] = [];
  private signature = '';
  /** The store list `ownerCache` was computed from. */
  private placedIds: readonly string[] = [];
  /** Stores this node holds or is loading. */
  private readonly held = new Map<string, 'loading' | 'ready'>();
  private readonly queue: string[] = [];
  /** Stores this node no longer owns whose owners all have them ready: the heartbeat that first saw it. */
  private readonly releasable = new Map<string, number>();
  private beats = 0;
  private loadsRunning = 0;
  private storeIds: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** A heartbeat due when the next other member's lease lapses, or when the settle wait ends. */
  private wake: NodeJS.Timeout | undefined;
  /** Proactive loads wait until this instant (the clock's ms; set at the first heartbeat). */
  private loadFrom: number | undefined;
  private readonly clock: () => number;
  private beating: Promise<void> | undefined;
  /** When the last successful renewal was sent (the clock's ms): the lease runs at least leaseMs from then. */
  private renewedAt: number | undefined;
  private again = false;
  private stopped = false;
  private isReady = false;
  /** The first heartbeat and reconcile have run. */
  readonly started: Promise<void>;
  /** Times each store took to load here (ms), and the stores released. */
  readonly counts = {
    loads: 0,
    loadFailures: 0,
    released: 0,
    heartbeatFailures: 0,
    /** The longest time between two successful renewals (ms): a lease lapses when it reaches leaseMs. */
    renewalGapMaxMs: 0,
    /** Loads put off because this node's own renewal was overdue. */
    loadsDeferred: 0,
  };

  constructor(private readonly o: PlacementOptions) {
    this.clock = o.clock ?? Date.now;
    this.started = this.beat();
    this.timer = setInterval(() => void this.beat(), Math.max(50, Math.floor(o.leaseMs / 3)));
    this.timer.unref();
  }

  get nodeId(): string {
    return this.o.nodeId;
  }

  /** "Serving my stores": every store this node owns is loaded. */
  ready(): boolean {
    return this.isReady;
  }

  /** Heartbeats now (after a load, or from tests); concurrent calls share one and run once more. */
  beat(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.beating) {
      this.again = true;
      return this.beating;
    }
    this.beating = (async () => {
      do {
        this.again = false;
        await this.once();
      } while (this.again && !this.stopped);
    })().finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async once(): Promise<void> {
    try {
      const ready: string[] = [];
      const loading: string[] = [];
      for (const [id, state] of this.held) (state === 'ready' ? ready : loading).push(id);
      const sentAt = this.clock();
      const rows = await this.o.registry.heartbeat({
        nodeId: this.o.nodeId,
        url: this.o.url,
        capacity: this.o.capacity,
        leaseMs: this.o.leaseMs,
        ready,
        loading,
      });
      if (this.renewedAt !== undefined)
        this.counts.renewalGapMaxMs = Math.max(this.counts.renewalGapMaxMs, sentAt - this.renewedAt);
      this.renewedAt = sentAt;
      this.storeIds = await this.o.registry.storeIds();
      this.beats++;
      if (this.loadFrom === undefined) {
        const fresh = rows.every((m) => m.nodeId === this.o.nodeId || (m.ready.length === 0 && m.loading.length === 0));
        this.loadFrom = this.clock() + (fresh ? (this.o.settleMs ?? this.o.leaseMs) : 0);
      }
      this.membership(rows);
      this.reconcile();
      this.schedule();
      this.pump();
    } catch (err) {
      this.counts.heartbeatFailures++;
      this.o.log('warn', 'placement heartbeat failed', { cause: err instanceof Error ? err.message : String(err) });
    }
  }

  private membership(rows: readonly ClusterMember[]): void {
    this.live = rows.filter((m) => m.leaseLeftMs > 0);
    this.readyAt = new Map(this.live.map((m) => [m.nodeId, new Set(m.ready)]));
    const candidates = this.live.filter((m) => !m.draining).map((m) => ({ nodeId: m.nodeId, capacity: m.capacity }));
    const signature = candidates.map((m) => `${m.nodeId}:${m.capacity}`).join(',');
    const storesChanged = !sameList(this.placedIds, this.storeIds);
    if (signature !== this.signature || storesChanged) {
      if (signature !== this.signature && this.signature !== '') {
        this.o.log('info', 'placement membership changed', { members: signature });
        // Still settling: wait one more settle time from this change, so that nodes starting
        // over several seconds (a loaded machine) all register before any loads its share.
        const now = this.clock();
        if (this.loadFrom !== undefined && now < this.loadFrom)
          this.loadFrom = now + (this.o.settleMs ?? this.o.leaseMs);
      }
      this.signature = signature;
      this.candidates = candidates;
      this.placedIds = this.storeIds;
      this.ownerCache = placement(this.storeIds, candidates, this.o.replicas);
    }
  }

  /**
   * The store's owners under the current membership, best first: the bounded placement of every
   * known store, or for a store created since the last read of the list, its preferred owners.
   */
  ownersOf(storeId: string): string[] {
    let list = this.ownerCache.get(storeId);
    if (list === undefined) {
      list = owners(storeId, this.candidates, this.o.replicas);
      this.ownerCache.set(storeId, list);
    }
    return list;
  }

  /** Loads what this node now owns; releases what it no longer owns once the owners have it ready. */
  private reconcile(): void {
    const me = this.o.nodeId;
    // An index the engine dropped by itself (a deleted store) is no longer held.
    const loaded = new Set(this.o.engine.heldStores().map((h) => h.storeId));
    for (const [id, state] of this.held) if (state === 'ready' && !loaded.has(id)) this.held.delete(id);
    // An index a query loaded (a forwarded request, a new store) is held like any other.
    for (const id of loaded) if (!this.held.has(id)) this.held.set(id, 'ready');
    let mine = 0;
    let readyMine = 0;
    const settling = this.clock() < (this.loadFrom ?? Infinity);
    const toLoad: { id: string; servedBy: number }[] = [];
    for (const id of this.storeIds) {
      if (!this.ownersOf(id).includes(me)) continue;
      mine++;
      const state = this.held.get(id);
      if (state === 'ready') readyMine++;
      else if (state === undefined && !settling) toLoad.push({ id, servedBy: this.servedBy(id) });
    }
    // The stores fewest live nodes serve first (those a dead node left with one owner, or none).
    toLoad.sort((x, y) => x.servedBy - y.servedBy);
    for (const t of toLoad) this.hold(t.id);
    const known = new Set(this.storeIds);
    for (const [id, state] of this.held) {
      if (state !== 'ready' || !known.has(id)) continue;
      const own = this.ownersOf(id);
      if (own.includes(me) || own.length === 0) continue;
      if (!own.every((n) => this.readyAt.get(n)?.has(id) === true)) {
        this.releasable.delete(id);
        continue;
      }
      // Released two heartbeats after its owners first reported it ready: by then every node has
      // read their report too and routes to them, not here.
      const since = this.releasable.get(id);
      if (since === undefined) this.releasable.set(id, this.beats);
      else if (this.beats - since >= 2) this.release(id);
    }
    this.isReady = this.candidates.some((m) => m.nodeId === me) ? readyMine === mine : true;
  }

  /** Live nodes that report the store ready. */
  private servedBy(storeId: string): number {
    let n = 0;
    for (const set of this.readyAt.values()) if (set.has(storeId)) n++;
    return n;
  }

  /**
   * Heartbeats again as soon as something may have changed between the regular ones: the
   * earliest lease of another member lapses (a dead node is noticed then, not up to a third of a
   * lease later), or the settle wait ends.
   */
  private schedule(): void {
    if (this.stopped) return;
    const now = this.clock();
    let next = Infinity;
    for (const m of this.live) if (m.nodeId !== this.o.nodeId) next = Math.min(next, m.leaseLeftMs + LAPSE_MARGIN_MS);
    if (this.loadFrom !== undefined && this.loadFrom > now) next = Math.min(next, this.loadFrom - now);
    if (this.wake) clearTimeout(this.wake);
    this.wake = undefined;
    if (!Number.isFinite(next)) return;
    this.wake = setTimeout(() => void this.beat(), Math.max(0, next));
    this.wake.unref();
  }

  private hold(storeId: string): void {
    this.held.set(storeId, 'loading');
    this.queue.push(storeId);
    this.pump();
  }

  /** Whether this node's own renewal is late (more than half a lease since the last one was sent). */
  private overdue(): boolean {
    return this.renewedAt !== undefined && this.clock() - this.renewedAt > this.o.leaseMs / 2;
  }

  private pump(): void {
    if (this.queue.length > 0 && this.loadsRunning < (this.o.loadConcurrency ?? 2) && this.overdue()) {
      // The next successful renewal pumps again.
      this.counts.loadsDeferred++;
      return;
    }
    while (this.loadsRunning < (this.o.loadConcurrency ?? 2) && this.queue.length > 0 && !this.stopped) {
      const id = this.queue.shift() as string;
      this.loadsRunning++;
      this.o.engine
        .holdStore(id)
        .then(
          () => {
            if (this.held.get(id) === 'loading') this.held.set(id, 'ready');
            this.counts.loads++;
          },
          (err: unknown) => {
            this.held.delete(id);
            this.counts.loadFailures++;
            this.o.log('warn', 'placement: store not loaded', {
              store_id: id,
              cause: err instanceof Error ? err.message : String(err),
            });
          },
        )
        .finally(() => {
          this.loadsRunning--;
          // The next load one event-loop turn later: timers (the renewal) and I/O go first.
          setImmediate(() => this.pump());
          // Tell the others at once: they may be waiting to drop the store, or route to it.
          if (this.loadsRunning === 0 && this.queue.length === 0) void this.beat();
        });
    }
  }

  private release(storeId: string): void {
    this.held.delete(storeId);
    this.releasable.delete(storeId);
    this.o.engine.releaseStore(storeId);
    this.counts.released++;
  }

  /**
   * Where a request for `storeId` goes. Served here when this node holds the store ready, when
   * another node forwarded it (never forwarded twice), or when this node owns it and no other
   * node has it ready (the request waits for the load). Else forwarded: to the live nodes that
   * have it ready (owners first), then to owners still loading it. `none`: no live node can.
   */
  route(storeId: string, forwarded: boolean): Route {
    const state = this.held.get(storeId);
    if (state === 'ready' || forwarded) return LOCAL;
    const me = this.o.nodeId;
    const own = this.ownersOf(storeId);
    const peers: Peer[] = [];
    for (const m of this.live)
      if (m.nodeId !== me && this.readyAt.get(m.nodeId)?.has(storeId) === true && own.includes(m.nodeId)) peers.push(m);
    for (const m of this.live)
      if (m.nodeId !== me && this.readyAt.get(m.nodeId)?.has(storeId) === true && !own.includes(m.nodeId))
        peers.push(m);
    if (own.includes(me)) {
      if (peers.length > 0) return { kind: 'forward', peers };
      if (state === undefined) this.hold(storeId);
      return LOCAL;
    }
    for (const id of own) {
      const m = this.live.find((x) => x.nodeId === id);
      if (m && !peers.includes(m)) peers.push(m);
    }
    return peers.length > 0 ? { kind: 'forward', peers } : NONE;
  }

  /** Figures for metrics and `latch cluster status`. */
  status(): PlacementStatus {
    let loading = 0;
    for (const s of this.held.values()) if (s === 'loading') loading++;
    return {
      members: this.live.length,
      held: this.held.size - loading,
      loading,
      ready: this.isReady,
      renewalGapMaxMs: this.counts.renewalGapMaxMs,
      loadsDeferred: this.counts.loadsDeferred,
    };
  }

  /** Stops renewing and leaves the registry (the others take over the stores at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.wake) clearTimeout(this.wake);
    await this.beating;
    await this.o.registry.leave(this.o.nodeId).catch(() => undefined);
  }
}

/**
 * The HTTP edge's view of placement before the node exists (the node's URL names the port the
 * server bound): until `start`, every request for a store is refused with 503 and Retry-After.
 */
export class LateEdge {
  private node: PlacementNode | undefined;

  get nodeId(): string {
    return this.node?.nodeId ?? '';
  }

  start(node: PlacementNode): PlacementNode {
    this.node = node;
    return node;
  }

  route(storeId: string, forwarded: boolean): Route {
    return this.node ? this.node.route(storeId, forwarded) : NONE;
  }

  ready(): boolean {
    return this.node?.ready() === true;
  }

  status(): PlacementStatus {
    return (
      this.node?.status() ?? { members: 0, held: 0, loading: 0, ready: false, renewalGapMaxMs: 0, loadsDeferred: 0 }
    );
  }
}
