// Prometheus metrics (text exposition format 0.0.4) at `GET /metrics`. Per request the server does
// one Map lookup by endpoint name (a string it already holds), one directory read by status and one
// histogram bucket scan, into its own segment of the process's share (./metrics-share.ts): nothing
// is allocated or formatted, and with `--http-threads` every thread's requests are summed into
// the one exposition whichever thread serves the scrape. Everything else (engine cache, pool,
// indexes, storage write latency, process) is read from `Latch.stats()` when scraped; the Checks
// the HTTP threads answer themselves add their result-cache counts from the share.
//
// Labels carry endpoint names and statuses only, never store ids or request data, so the
// exposition reveals traffic shape but no tenant's data (docs/operations.md: why it is public).

import { constants, performance, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

import type { EngineStats, Histogram, ShadowStats } from '../engine/contract.js';
import type { DecisionStats } from '../api/decisions/log.js';
import {
  addToSeries,
  EXTRA_CACHE_ENTRIES,
  EXTRA_CACHE_HITS,
  EXTRA_CACHE_MISSES,
  EXTRA_IN_FLIGHT,
  GC_KIND_WORDS,
  MetricsShare,
} from './metrics-share.js';

/** Label for requests that matched no endpoint (unknown paths): keeps the series set bounded. */
export const UNMATCHED = 'unmatched';

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function num(v: number): string {
  return Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN';
}

/** Appends a histogram: cumulative buckets, +Inf, sum, count; values divided by `scale` (ms → s by default). */
function histogram(out: string[], name: string, labels: string, t: Histogram, scale = 1000): void {
  let cum = 0;
  const sep = labels ? ',' : '';
  for (let i = 0; i < t.bounds.length; i++) {
    cum += t.counts[i] ?? 0;
    out.push(`${name}_bucket{${labels}${sep}le="${num((t.bounds[i] as number) / scale)}"} ${cum}`);
  }
  out.push(`${name}_bucket{${labels}${sep}le="+Inf"} ${t.count}`);
  out.push(`${name}_sum${labels ? `{${labels}}` : ''} ${num(t.sumMs / scale)}`);
  out.push(`${name}_count${labels ? `{${labels}}` : ''} ${t.count}`);
}

function header(out: string[], name: string, type: string, help: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

/** Bucket bounds of the GC pause histogram (ms): fine below the 2 ms a Check's p99 is held to. */
const GC_BOUNDS_MS: readonly number[] = [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 25, 50, 100, 250, 1000];

/** GC kinds as Node reports them (perf_hooks `entry.detail.kind`), by label, in the share's GC area order. */
const GC_KIND_LABELS: readonly (readonly [string, number])[] = [
  ['minor', constants.NODE_PERFORMANCE_GC_MINOR],
  ['major', constants.NODE_PERFORMANCE_GC_MAJOR],
  ['incremental', constants.NODE_PERFORMANCE_GC_INCREMENTAL],
  ['weakcb', constants.NODE_PERFORMANCE_GC_WEAKCB],
];

export class Metrics {
  /** The HTTP series: this thread's segment, every thread's when scraped. */
  readonly share: MetricsShare;
  private readonly started = Date.now();
  /** Main-thread GC pauses by kind (the event loop stands still meanwhile), into the share's GC area. */
  private readonly gcObserver: PerformanceObserver | undefined;

  /**
   * `endpoints`: every route name the server registers (anything else counts as `unmatched`).
   * `share`: an HTTP thread's segment in the main thread's share (`--http-threads`), or the number
   * of HTTP threads the new share (this thread's segment first) keeps a segment for (default 0).
   */
  constructor(endpoints: readonly string[], share: MetricsShare | number = 0) {
    this.share =
      typeof share === 'number'
        ? new MetricsShare(MetricsShare.create([...endpoints, UNMATCHED], 1 + share), 0)
        : share;
    // The main thread's alone: an HTTP thread renders the main thread's figures from the share.
    if (this.share.thread !== 0) return;
    const gc = this.share.gc;
    this.gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const kind = gcKind(entry);
        const k = GC_KIND_LABELS.findIndex((l) => l[1] === kind);
        if (k >= 0) addToSeries(gc, k * GC_KIND_WORDS, GC_BOUNDS_MS, entry.duration);
      }
    });
    this.gcObserver.observe({ entryTypes: ['gc'] });
  }

  /** Stops observing GC (the server closed). */
  close(): void {
    this.gcObserver?.disconnect();
  }

  /** One finished request; `status` 499 when the client went away before a reply. */
  observe(endpoint: string, status: number, ms: number): void {
    this.share.observe(endpoint, status, ms);
  }

  /** The whole exposition; `engine` is read now (scrape time). */
  render(engine: EngineStats | undefined, decisions?: DecisionStats): string {
    const out: string[] = [];
    this.renderHttp(out);
    if (engine) renderEngine(out, this.withThreadCaches(engine));
    if (decisions) renderDecisions(out, decisions);
    renderProcess(out, this.started);
    header(
      out,
      'latch_gc_pause_seconds',
      'histogram',
      'Main-thread garbage-collection pauses, by kind (minor = scavenge).',
    );
    GC_KIND_LABELS.forEach(([label], k) =>
      histogram(out, 'latch_gc_pause_seconds', `kind="${label}"`, gcHistogram(this.share.gc, k)),
    );
    return out.join('\n') + '\n';
  }

  /** The engine's result cache plus the caches of the Checks HTTP threads answered themselves. */
  private withThreadCaches(e: EngineStats): EngineStats {
    const s = this.share;
    return {
      ...e,
      cache: {
        hits: e.cache.hits + s.total(EXTRA_CACHE_HITS),
        misses: e.cache.misses + s.total(EXTRA_CACHE_MISSES),
        entries: e.cache.entries + s.total(EXTRA_CACHE_ENTRIES),
        capacity: e.cache.capacity,
      },
    };
  }

  private renderHttp(out: string[]): void {
    const all = this.share.series();
    header(
      out,
      'latch_http_requests_total',
      'counter',
      'HTTP requests finished, by endpoint (OpenFGA operation name) and status.',
    );
    for (const s of all)
      out.push(`latch_http_requests_total{endpoint="${esc(s.endpoint)}",status="${s.status}"} ${s.timings.count}`);
    header(
      out,
      'latch_http_request_duration_seconds',
      'histogram',
      'HTTP request latency from routing to the last byte handed to the socket.',
    );
    for (const s of all)
      histogram(
        out,
        'latch_http_request_duration_seconds',
        `endpoint="${esc(s.endpoint)}",status="${s.status}"`,
        s.timings,
      );
    header(out, 'latch_http_requests_in_flight', 'gauge', 'HTTP and channel requests being processed now.');
    out.push(`latch_http_requests_in_flight ${this.share.total(EXTRA_IN_FLIGHT)}`);
  }
}

/** Kind `k`'s pauses as read from the share's GC area now. */
function gcHistogram(gc: Float64Array, k: number): Histogram {
  const at = k * GC_KIND_WORDS;
  return {
    bounds: GC_BOUNDS_MS,
    counts: gc.slice(at + 2, at + 3 + GC_BOUNDS_MS.length),
    count: gc[at] as number,
    sumMs: gc[at + 1] as number,
    last: 0,
  };
}

/** The GC kind of a `gc` entry (Node puts it in `detail`, which the typings of PerformanceEntry omit). */
function gcKind(entry: PerformanceEntry): number {
  const detail = (entry as PerformanceEntry & { readonly detail?: { readonly kind?: number } }).detail;
  return detail?.kind ?? -1;
}

function gauge(out: string[], name: string, help: string, value: number, type = 'gauge'): void {
  header(out, name, type, help);
  out.push(`${name} ${num(value)}`);
}

function renderEngine(out: string[], e: EngineStats): void {
  gauge(
    out,
    'latch_check_cache_hits_total',
    'Check result-cache hits (Checks without HIGHER_CONSISTENCY, contextual tuples or context).',
    e.cache.hits,
    'counter',
  );
  gauge(out, 'latch_check_cache_misses_total', 'Check result-cache misses.', e.cache.misses, 'counter');
  gauge(out, 'latch_check_cache_entries', 'Entries in the Check result cache.', e.cache.entries);
  gauge(out, 'latch_check_cache_capacity', 'Capacity of the Check result cache (0 = off).', e.cache.capacity);
  const p = e.pool;
  gauge(
    out,
    'latch_pool_workers',
    'Worker threads of the Check pool (0 until the first pooled batch).',
    p?.workers ?? 0,
  );
  gauge(out, 'latch_pool_queue_size', 'Pool tasks waiting for a worker.', p?.queueSize ?? 0);
  gauge(
    out,
    'latch_pool_utilization_ratio',
    'Share of the pool capacity spent running tasks since it started (0 … 1).',
    p?.utilization ?? 0,
  );
  header(out, 'latch_pool_queue_wait_seconds', 'summary', 'Time pool tasks waited for a worker.');
  for (const [q, v] of [
    ['0.5', p?.waitMs.p50],
    ['0.99', p?.waitMs.p99],
  ] as const)
    out.push(`latch_pool_queue_wait_seconds{quantile="${q}"} ${num((v ?? 0) / 1000)}`);
  out.push(`latch_pool_queue_wait_seconds_sum ${num(p ? (p.waitMs.mean * p.completed) / 1000 : 0)}`);
  out.push(`latch_pool_queue_wait_seconds_count ${p?.completed ?? 0}`);
  gauge(out, 'latch_index_stores', 'Store indexes loaded.', e.indexes.stores);
  gauge(out, 'latch_index_tuples', 'Tuples held by the loaded store indexes.', e.indexes.tuples);
  gauge(out, 'latch_index_bytes', 'Shared-memory bytes of the loaded index bases.', e.indexes.bytes);
  gauge(
    out,
    'latch_shared_memory_bytes',
    'Bytes allocated in the walker shared memory (indexes, overlays, scratch).',
    e.sharedMemoryBytes,
  );
  header(
    out,
    'latch_index_checkpoints_total',
    'counter',
    'Index checkpoints by outcome (at load, in the background, at a graceful stop); a failure leaves the previous one.',
  );
  out.push(`latch_index_checkpoints_total{outcome="written"} ${e.indexes.checkpoints.written}`);
  out.push(`latch_index_checkpoints_total{outcome="failed"} ${e.indexes.checkpoints.failed}`);
  const r = e.replication;
  gauge(
    out,
    'latch_replication_revisions_applied_total',
    'Store revisions applied from the change log (commits of other nodes, or of this node out of order).',
    r.revisionsApplied,
    'counter',
  );
  gauge(
    out,
    'latch_replication_revisions_carried_total',
    'Of those, the revisions applied from the changes their commit event carried (PostgreSQL NOTIFY), without a change-log read.',
    r.revisionsCarried,
    'counter',
  );
  gauge(
    out,
    'latch_replication_catchup_failures_total',
    'Index catch-ups from the change log that failed (retried by the next event, poll or waiting query).',
    r.catchUpFailures,
    'counter',
  );
  gauge(out, 'latch_replication_polls_total', "Polls of the loaded stores' committed revisions.", r.polls, 'counter');
  gauge(
    out,
    'latch_replication_poll_failures_total',
    'Polls that failed (the datastore unreachable).',
    r.pollFailures,
    'counter',
  );
  header(
    out,
    'latch_replication_apply_lag_seconds',
    'histogram',
    "Commit event of another node's write received → its revision applied to the index (this node's share of the replication lag).",
  );
  histogram(out, 'latch_replication_apply_lag_seconds', '', r.applyLag);
  header(
    out,
    'latch_index_load_duration_seconds',
    'histogram',
    'Time a store index took to load (checkpoint plus change-log tail, or full scan).',
  );
  histogram(out, 'latch_index_load_duration_seconds', '', e.indexes.loads);
  header(
    out,
    'latch_storage_write_duration_seconds',
    'histogram',
    'Storage (LevelDB) commit latency of Write requests.',
  );
  histogram(out, 'latch_storage_write_duration_seconds', '', e.writes);
  header(
    out,
    'latch_check_resolution_depth',
    'histogram',
    'Deepest hop of each Check the walker answered on the main thread (pool batches not counted).',
  );
  histogram(out, 'latch_check_resolution_depth', '', e.checkDepth, 1);
  renderShadow(out, e.shadow);
}

/** Shadow evaluation (docs/changing-models.md): per operation, never per store. */
function renderShadow(out: string[], s: ShadowStats): void {
  header(out, 'latch_shadow_evaluations_total', 'counter', 'Sampled requests evaluated under the store shadow model.');
  for (const [op, n] of Object.entries(s.evaluated)) out.push(`latch_shadow_evaluations_total{operation="${op}"} ${n}`);
  header(
    out,
    'latch_shadow_disagreements_total',
    'counter',
    'Sampled requests whose answer under the shadow model differed (each is recorded in the store shadow report).',
  );
  for (const [op, n] of Object.entries(s.disagreements))
    out.push(`latch_shadow_disagreements_total{operation="${op}"} ${n}`);
  gauge(
    out,
    'latch_shadow_dropped_total',
    'Sampled requests dropped because the shadow queue was full.',
    s.dropped,
    'counter',
  );
  gauge(out, 'latch_shadow_failures_total', 'Shadow evaluations that failed inside latch.', s.failed, 'counter');
  gauge(out, 'latch_shadow_queue_length', 'Sampled requests waiting for their shadow evaluation.', s.queued);
}

function renderDecisions(out: string[], d: DecisionStats): void {
  gauge(out, 'latch_decisions_recorded_total', 'Decisions written to the decision log.', d.recorded, 'counter');
  gauge(
    out,
    'latch_decisions_dropped_total',
    'Sampled decisions not recorded (queue full or write failed).',
    d.dropped,
    'counter',
  );
  gauge(out, 'latch_decisions_bytes', 'Bytes the stored decisions hold (keys and values).', d.bytes);
  gauge(out, 'latch_decisions_queued', 'Decisions waiting to be written.', d.queued);
}

function renderProcess(out: string[], started: number): void {
  const m = process.memoryUsage();
  gauge(out, 'latch_process_resident_memory_bytes', 'Resident set size.', m.rss);
  gauge(out, 'latch_process_heap_used_bytes', 'V8 heap in use.', m.heapUsed);
  gauge(out, 'latch_process_uptime_seconds', 'Seconds since the server started.', (Date.now() - started) / 1000);
  const cpu = process.cpuUsage();
  gauge(
    out,
    'latch_process_cpu_seconds_total',
    'User and system CPU time of the process, all threads (HTTP, pool workers, GC helpers).',
    (cpu.user + cpu.system) / 1e6,
    'counter',
  );
  // The main thread serves every JSON request: the latency tail follows how busy it is
  // (bench/results/2026-11-23-http-and-msgpack-channel.json, fifth session), so its busy time is exported on its own.
  gauge(
    out,
    'latch_event_loop_active_seconds_total',
    "Time the main thread (HTTP, Check, writes) spent working rather than waiting for I/O; its rate is that thread's utilization.",
    performance.eventLoopUtilization().active / 1000,
    'counter',
  );
}
