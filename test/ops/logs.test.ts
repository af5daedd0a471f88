// Structured logs of a real `latch serve`: one line per request when enabled, its request id the
// X-Request-Id the client saw; text format; level filtering; readiness and health probes.

import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DOC_MODEL, freePort, json, startLatch, type LatchProcess } from './process.js';

async function stop(p: LatchProcess): Promise<string> {
  p.proc.kill('SIGTERM');
  expect(await p.exited).toBe(0);
  return p.stderr();
}

function lines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('request logs', () => {
  it('one JSON line per request with the X-Request-Id, endpoint, store, status and error code', async () => {
    const p = await startLatch(['--datastore', 'memory', '--log-requests']);
    const created = await json(p.base, 'POST', '/stores', { name: 'logs' });
    const store = created.body.id as string;
    const bad = await json(p.base, 'POST', `/stores/${store}/check`, {
      tuple_key: { user: 'x', relation: 'r', object: 'o' },
    });
    expect(bad.status).toBe(400);
    const all = lines(await stop(p));
    const requests = all.filter((l) => l.msg === 'request');
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({
      level: 'info',
      request_id: created.headers.get('x-request-id'),
      endpoint: 'CreateStore',
      status: 201,
    });
    expect(requests[1]).toMatchObject({
      request_id: bad.headers.get('x-request-id'),
      endpoint: 'Check',
      store_id: store,
      status: 400,
      code: bad.body.code,
    });
    expect(typeof requests[1]?.duration_ms).toBe('number');
    expect(typeof requests[1]?.time).toBe('string');
    expect(all.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['latch listening', 'shutting down', 'latch stopped']),
    );
  });

  it('text format, and no request lines unless enabled', async () => {
    const p = await startLatch(
      ['--datastore', 'memory', '--log-format', 'text'],
      { LATCH_LOG_REQUESTS: 'true' },
      await freePort(),
    );
    const r = await json(p.base, 'GET', '/healthz');
    const out = await stop(p);
    expect(out).toMatch(
      /^\S+Z INFO latch listening host=127.0.0.1 port=\d+ data=memory auth=none playground=http:\/\/127.0.0.1:\d+\/playground\/ uws="[^"]+" uws_header_limit="[^"]+" pid=\d+$/m,
    );
    expect(out).toMatch(
      new RegExp(`INFO request request_id=${r.headers.get('x-request-id')} endpoint=Health status=200 duration_ms=`),
    );
    const quiet = await startLatch(['--datastore', 'memory']);
    await json(quiet.base, 'GET', '/healthz');
    expect(lines(await stop(quiet)).filter((l) => l.msg === 'request')).toEqual([]);
  });

  it('log level warn keeps info lines out, request lines included', async () => {
    const p = await startLatch(
      ['--datastore', 'memory', '--log-requests', '--log-level', 'warn'],
      {},
      await freePort(),
    );
    expect((await json(p.base, 'GET', '/healthz')).status).toBe(200);
    expect(await stop(p)).toBe('');
  });
});

describe('probes', () => {
  it('/healthz serves at once; /readyz answers 200 only once the indexes are loaded', async () => {
    // A store without a checkpoint (the first process is killed), so the restart rebuilds its index.
    const dir = mkdtempSync(path.join(tmpdir(), 'latch-ready-'));
    try {
      const first = await startLatch(['--data-dir', dir]);
      const store = (await json(first.base, 'POST', '/stores', { name: 'ready' })).body.id as string;
      await json(first.base, 'POST', `/stores/${store}/authorization-models`, DOC_MODEL);
      for (let w = 0; w < 50; w++) {
        const tuple_keys = Array.from({ length: 100 }, (_, i) => ({
          user: `user:u${i}`,
          relation: 'viewer',
          object: `doc:${w}-${i}`,
        }));
        expect((await json(first.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys } })).status).toBe(200);
      }
      first.proc.kill('SIGKILL');
      await first.exited;

      const p = await startLatch(['--data-dir', dir]);
      expect((await json(p.base, 'GET', '/healthz')).body).toEqual({ status: 'SERVING' });
      const seen: number[] = [];
      let ready = await json(p.base, 'GET', '/readyz');
      for (let i = 0; i < 500 && ready.status !== 200; i++) {
        seen.push(ready.status);
        expect(ready.body.code).toBe('unavailable');
        ready = await json(p.base, 'GET', '/readyz');
      }
      expect(ready.body).toEqual({ status: 'SERVING' });
      // Ready means loaded: the index of the store and all its tuples are there.
      const metrics = await (await fetch(`${p.base}/metrics`)).text();
      expect(metrics).toMatch(/^latch_index_stores 1$/m);
      expect(metrics).toMatch(/^latch_index_tuples 5000$/m);
      expect(metrics).toMatch(/^latch_index_load_duration_seconds_count 1$/m);
      expect(seen.every((s) => s === 503)).toBe(true);
      await stop(p);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
