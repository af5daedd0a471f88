// GET /metrics from a real server (LevelDB in a temp dir) after real traffic — JSON endpoints,
// the result cache, a pooled msgpack batch — parsed by a strict Prometheus text-format parser
// (prom2javascript: rejects malformed lines, labels and histograms).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getMetricsFromIterator, type PromMetric, type PromMetrics } from 'prom2javascript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LatchChannelClient } from '../../src/client/index.js';
import { startServer, type RunningServer } from '../../src/main.js';
import { DOC_MODEL, json } from './process.js';

const dir = mkdtempSync(path.join(tmpdir(), 'latch-metrics-'));
let server: RunningServer;
let base: string;
let families: PromMetrics;

function family(name: string): PromMetric {
  const f = families[name];
  if (!f) throw new Error(`no metric family ${name}`);
  return f;
}

/** The sample of `name` whose labels include `labels`: value, or buckets/count/sum, or quantiles. */
function sample(
  name: string,
  labels: Record<string, string> = {},
): Record<string, unknown> & { labels: Record<string, string> } {
  const data = family(name).data as (Record<string, unknown> & { labels: Record<string, string> })[];
  const s = data.find((m) => Object.entries(labels).every(([k, v]) => m.labels[k] === v));
  if (!s) throw new Error(`no ${name} sample with ${JSON.stringify(labels)}`);
  return s;
}

const value = (name: string, labels: Record<string, string> = {}): number => sample(name, labels).value as number;

/** A fresh scrape of /metrics, parsed. */
const scrape = async (): Promise<PromMetrics> =>
  getMetricsFromIterator((await (await fetch(`${base}/metrics`)).text()).split('\n')[Symbol.iterator]());

beforeAll(async () => {
  server = await startServer({ host: '127.0.0.1', port: 0, dataDir: dir, engine: { workers: 2 } });
  base = `http://127.0.0.1:${server.port}`;
  const store = (await json(base, 'POST', '/stores', { name: 'metrics' })).body.id as string;
  await json(base, 'POST', `/stores/${store}/authorization-models`, DOC_MODEL);
  for (let i = 0; i < 5; i++) {
    const r = await json(base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [{ user: `user:u${i}`, relation: 'viewer', object: `doc:${i}` }] },
    });
    expect(r.status).toBe(200);
  }
  const check = {
    tuple_key: { user: 'user:u1', relation: 'viewer', object: 'doc:1' },
    consistency: 'MINIMIZE_LATENCY',
  };
  for (let i = 0; i < 3; i++)
    expect((await json(base, 'POST', `/stores/${store}/check`, check)).body.allowed).toBe(true);
  expect(
    (
      await json(base, 'POST', `/stores/${store}/check`, {
        tuple_key: { user: 'bad', relation: 'viewer', object: 'doc:1' },
      })
    ).status,
  ).toBe(400);
  expect((await fetch(`${base}/no/such/path/${Math.random()}`)).status).toBe(404);
  // A batch large enough for the worker pool (the client sends frames of 4,096 requests, each one
  // check group); HIGHER_CONSISTENCY keeps every item out of the result cache, so all of them walk.
  const client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
  const reqs = Array.from({ length: 5000 }, (_, i) => ({
    op: 'check',
    store_id: store,
    body: {
      tuple_key: { user: `user:u${i % 5}`, relation: 'viewer', object: `doc:${i % 7}` },
      consistency: 'HIGHER_CONSISTENCY',
    },
  }));
  const answers = await client.batch(reqs);
  expect(answers.filter((a) => (a.body as { allowed?: boolean }).allowed === true)).toHaveLength(
    reqs.filter((_, i) => i % 5 === i % 7).length,
  );
  await client.close();
  const r = await fetch(`${base}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toContain('text/plain');
  families = await getMetricsFromIterator((await r.text()).split('\n')[Symbol.iterator]());
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('/metrics', () => {
  it('counts requests per endpoint and status, unknown paths under one label', () => {
    expect(family('latch_http_requests_total').type).toBe('counter');
    expect(value('latch_http_requests_total', { endpoint: 'Write', status: '200' })).toBe(5);
    expect(value('latch_http_requests_total', { endpoint: 'Check', status: '200' })).toBe(3);
    expect(value('latch_http_requests_total', { endpoint: 'Check', status: '400' })).toBe(1);
    expect(value('latch_http_requests_total', { endpoint: 'CreateStore', status: '201' })).toBe(1);
    expect(value('latch_http_requests_total', { endpoint: 'unmatched', status: '404' })).toBe(1);
    const labels = (family('latch_http_requests_total').data as { labels: Record<string, string> }[]).map(
      (m) => m.labels.endpoint ?? '',
    );
    expect(labels.some((e) => e.startsWith('/'))).toBe(false);
  });

  it('has a latency histogram per endpoint and status with cumulative buckets', () => {
    const h = sample('latch_http_request_duration_seconds', { endpoint: 'Write', status: '200' });
    expect(family('latch_http_request_duration_seconds').type).toBe('histogram');
    expect(h.count).toBe(5);
    expect(h.sum).toBeGreaterThan(0);
    const buckets = Object.entries(h.buckets as Record<string, number>)
      .map(([le, n]) => [Number(le), Number(n)] as const)
      .sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < buckets.length; i++)
      expect((buckets[i] as readonly number[])[1]).toBeGreaterThanOrEqual(
        (buckets[i - 1] as readonly number[])[1] as number,
      );
    expect(buckets.at(-1)?.[1]).toBe(5);
  });

  it('reports the result cache, the pool, the index and LevelDB writes', () => {
    expect(value('latch_check_cache_misses_total')).toBeGreaterThanOrEqual(1);
    expect(value('latch_check_cache_hits_total')).toBeGreaterThanOrEqual(2);
    expect(value('latch_pool_workers')).toBe(2);
    expect(sample('latch_pool_queue_wait_seconds').count).toBeGreaterThan(0);
    expect(value('latch_pool_utilization_ratio')).toBeGreaterThan(0);
    expect(value('latch_index_stores')).toBe(1);
    expect(value('latch_index_tuples')).toBe(5);
    expect(value('latch_index_bytes')).toBeGreaterThan(0);
    expect(sample('latch_index_load_duration_seconds').count).toBe(1);
    // A store created empty in this process loads without a scan and is far below the background
    // threshold: no checkpoint yet, and none failed.
    expect(value('latch_index_checkpoints_total', { outcome: 'written' })).toBe(0);
    expect(value('latch_index_checkpoints_total', { outcome: 'failed' })).toBe(0);
    // One node: each write is applied by its own write path, never read back from the log.
    expect(value('latch_replication_revisions_applied_total')).toBe(0);
    expect(value('latch_replication_revisions_carried_total')).toBe(0);
    expect(value('latch_replication_catchup_failures_total')).toBe(0);
    expect(value('latch_replication_poll_failures_total')).toBe(0);
    expect(sample('latch_storage_write_duration_seconds').count).toBe(5);
    expect(sample('latch_storage_write_duration_seconds').sum).toBeGreaterThan(0);
    expect(value('latch_process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('reports the CPU time of the process and the busy time of the main thread as counters that grow with work', async () => {
    const counter = (m: PromMetrics, name: string): number => {
      expect(m[name]?.type).toBe('counter');
      return (m[name]?.data[0] as { value: number }).value;
    };
    const wall0 = performance.now();
    const cpuAround = process.cpuUsage();
    const before = await scrape();
    const cpu0 = counter(before, 'latch_process_cpu_seconds_total');
    const active0 = counter(before, 'latch_event_loop_active_seconds_total');
    expect(cpu0).toBeGreaterThan(0);
    expect(active0).toBeGreaterThan(0);
    // The server runs in this process: work on this thread until the process has spent 200 ms more
    // CPU. Its event loop was busy all that while, for at least the loop's wall time.
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const spentUs = (): number => {
      const u = process.cpuUsage(c0);
      return u.user + u.system;
    };
    while (spentUs() < 200_000);
    const busySeconds = (performance.now() - t0) / 1000;
    const after = await scrape();
    const cpuSpan = process.cpuUsage(cpuAround);
    const wallSpan = (performance.now() - wall0) / 1000;
    // In seconds, between what happened between the scrapes and what happened around them.
    const cpuDelta = counter(after, 'latch_process_cpu_seconds_total') - cpu0;
    expect(cpuDelta).toBeGreaterThanOrEqual(0.2);
    expect(cpuDelta).toBeLessThanOrEqual((cpuSpan.user + cpuSpan.system) / 1e6);
    const activeDelta = counter(after, 'latch_event_loop_active_seconds_total') - active0;
    expect(activeDelta).toBeGreaterThanOrEqual(busySeconds - 0.001);
    expect(activeDelta).toBeLessThanOrEqual(wallSpan);
  });

  it('reports the resolution depth of inline Checks (the direct doc:1#viewer@user:u1 resolves at depth 0)', () => {
    const h = sample('latch_check_resolution_depth');
    expect(family('latch_check_resolution_depth').type).toBe('histogram');
    expect(h.count).toBeGreaterThanOrEqual(1);
    expect(Number((h.buckets as Record<string, number>)['0'])).toBeGreaterThanOrEqual(1);
  });

  it('reports main-thread GC pauses by kind; a burst of short-lived allocation shows up as minor pauses', async () => {
    const minor = (m: PromMetrics): number =>
      ((m.latch_gc_pause_seconds?.data ?? []) as { labels: Record<string, string>; count: number }[]).find(
        (d) => d.labels.kind === 'minor',
      )?.count ?? -1;
    const before = await scrape();
    expect(before.latch_gc_pause_seconds?.type).toBe('histogram');
    const kinds = (before.latch_gc_pause_seconds?.data as { labels: Record<string, string> }[]).map(
      (d) => d.labels.kind,
    );
    expect(kinds).toEqual(['minor', 'major', 'incremental', 'weakcb']);
    let sink = 0;
    for (let i = 0; i < 2_000_000; i++) sink += { i, s: `x${i}` }.s.length; // ≈ 100 MB of garbage: several scavenges
    expect(sink).toBeGreaterThan(0);
    // GC entries reach the observer asynchronously.
    await vi.waitFor(async () => expect(minor(await scrape())).toBeGreaterThan(minor(before)));
  });

  it('needs no credential when authentication is on (docs/operations.md), the API still does', async () => {
    const key = 'metrics-test-key-0123456789';
    const authed = await startServer({
      host: '127.0.0.1',
      port: 0,
      datastore: 'memory',
      auth: { mode: 'preshared', presharedKeys: [key] },
    });
    try {
      const base = `http://127.0.0.1:${authed.port}`;
      expect((await fetch(`${base}/stores`)).status).toBe(401);
      const r = await fetch(`${base}/metrics`);
      expect(r.status).toBe(200);
      const parsed = await getMetricsFromIterator((await r.text()).split('\n')[Symbol.iterator]());
      const unauth = (parsed.latch_http_requests_total?.data ?? []) as {
        labels: Record<string, string>;
        value: number;
      }[];
      expect(unauth.find((m) => m.labels.endpoint === 'ListStores' && m.labels.status === '401')?.value).toBe(1);
      expect((await fetch(`${base}/stores`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    } finally {
      await authed.close();
    }
  });

  it('is off when disabled', async () => {
    const off = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory', metrics: false });
    try {
      const r = await fetch(`http://127.0.0.1:${off.port}/metrics`);
      expect(r.status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
