// `--http-threads`: HTTP and the channel served from worker threads over the main thread's one
// engine. A server whose API connections all land on a worker thread (`mainThreadServes: false`)
// answers a scripted sequence exactly as a one-thread server does (status, catalog code, body,
// Latch-Revision), streams past the forwarding window, follows Watch live, serves the msgpack
// channel, enforces auth; configurations with per-thread auth state are refused.
//
// The threads run the built bundle when dist/ is fresh (THREAD_ENTRY, the entry `latch serve`
// starts), else the sources through tsx: about 0.5 s of CPU per thread against 2.2 s.

import { PerformanceObserver } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { THREAD_ENTRY } from '../support/latch-process.js';
import { LatchChannelClient } from '../../src/client/index.js';
import { parseServeArgs } from '../../src/cli/serve.js';
import { UsageError } from '../../src/cli/args.js';
import { Metrics } from '../../src/http/metrics.js';
import { MetricsShare } from '../../src/http/metrics-share.js';
import { STREAM_WINDOW } from '../../src/http/threads/protocol.js';
import { call, MODEL, start } from './helpers.js';

/**
 * vi.waitFor's default (1 s) is shorter than eight fresh connections take at load 20: the wait
 * ends on the signal, this only bounds a hang.
 */
const WAIT = { timeout: 30_000, interval: 50 };

type Server = Awaited<ReturnType<typeof start>>;

// Set for this file's servers only (this file shares its worker with others: see vitest.config.ts).
beforeAll(() => {
  if (THREAD_ENTRY) vi.stubEnv('LATCH_THREAD_ENTRY', THREAD_ENTRY);
});
afterAll(() => {
  vi.unstubAllEnvs();
});

/** One request of the script; `$store` / `$model` in the path or body are the created ids. */
interface Step {
  readonly method: string;
  readonly path: string;
  readonly body?: Record<string, unknown> | string;
  readonly headers?: Record<string, string>;
}

const key = (user: string, relation: string, object: string): { user: string; relation: string; object: string } => ({
  user,
  relation,
  object,
});
const MANY = STREAM_WINDOW * 2 + 17;

const SCRIPT: readonly Step[] = [
  {
    method: 'POST',
    path: '/stores/$store/write',
    body: { writes: { tuple_keys: [key('user:anne', 'owner', 'doc:1')] } },
  },
  {
    method: 'POST',
    path: '/stores/$store/write',
    body: {
      writes: {
        tuple_keys: [
          key('group:eng#member', 'viewer', 'doc:2'),
          key('user:bob', 'member', 'group:eng'),
          { ...key('user:cid', 'viewer', 'doc:3'), condition: { name: 'office' } },
        ],
      },
    },
  },
  {
    method: 'POST',
    path: '/stores/$store/write',
    body: { writes: { tuple_keys: [key('user:anne', 'owner', 'doc:1')] } },
  },
  { method: 'POST', path: '/stores/$store/check', body: { tuple_key: key('user:anne', 'viewer', 'doc:1') } },
  { method: 'POST', path: '/stores/$store/check', body: { tuple_key: key('user:bob', 'viewer', 'doc:2') } },
  { method: 'POST', path: '/stores/$store/check', body: { tuple_key: key('user:bob', 'viewer', 'doc:1') } },
  { method: 'POST', path: '/stores/$store/check', body: { tuple_key: key('user:cid', 'viewer', 'doc:3') } },
  {
    method: 'POST',
    path: '/stores/$store/check',
    body: { tuple_key: key('user:cid', 'viewer', 'doc:3'), context: { ip: '10.0.0.1' } },
  },
  { method: 'POST', path: '/stores/$store/check', body: { tuple_key: key('user:anne', 'nope', 'doc:1') } },
  {
    method: 'POST',
    path: '/stores/$store/check',
    body: { tuple_key: key('user:anne', 'viewer', 'doc:1'), consistency: 'HIGHER_CONSISTENCY' },
    headers: { 'Latch-Min-Revision': '3' },
  },
  { method: 'POST', path: '/stores/$store/check', body: '{"tuple_key":' },
  {
    method: 'POST',
    path: '/stores/01ARZ3NDEKTSV4RRFFQ69G5FAV/check',
    body: { tuple_key: key('user:a', 'viewer', 'doc:1') },
  },
  {
    method: 'POST',
    path: '/stores/$store/batch-check',
    body: {
      checks: [
        { tuple_key: key('user:anne', 'viewer', 'doc:1'), correlation_id: 'a' },
        { tuple_key: key('user:anne', 'nope', 'doc:1'), correlation_id: 'b' },
        { tuple_key: key('user:bob', 'viewer', 'doc:9'), correlation_id: 'c' },
      ],
    },
  },
  { method: 'POST', path: '/stores/$store/list-objects', body: { type: 'doc', relation: 'viewer', user: 'user:bob' } },
  {
    method: 'POST',
    path: '/stores/$store/streamed-list-objects',
    body: { type: 'doc', relation: 'viewer', user: 'user:many' },
  },
  {
    method: 'POST',
    path: '/stores/$store/list-users',
    body: { object: { type: 'doc', id: '2' }, relation: 'viewer', user_filters: [{ type: 'user' }] },
  },
  { method: 'POST', path: '/stores/$store/expand', body: { tuple_key: { relation: 'viewer', object: 'doc:2' } } },
  { method: 'POST', path: '/stores/$store/read', body: { tuple_key: { object: 'doc:' } } },
  { method: 'GET', path: '/stores/$store/changes?page_size=2' },
  { method: 'GET', path: '/stores/$store/authorization-models/$model' },
  { method: 'GET', path: '/stores/$store' },
  { method: 'DELETE', path: '/stores/$store/check' },
  { method: 'GET', path: '/no/such/path' },
];

/** Runs the script on `base` in a fresh store; each answer with the store's and model's ids made neutral. */
async function runScript(base: string): Promise<string[]> {
  const created = await call(base, 'POST', '/stores', { name: 'threads' });
  const store = (created.json as { id: string }).id;
  const model = await call(base, 'POST', `/stores/${store}/authorization-models`, MODEL);
  const modelId = (model.json as { authorization_model_id: string }).authorization_model_id;
  const many = Array.from({ length: MANY }, (_, i) => key('user:many', 'owner', `doc:m${i}`));
  for (let i = 0; i < many.length; i += 100)
    await call(base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: many.slice(i, i + 100) } });
  const out: string[] = [];
  const fill = (s: string): string => s.replaceAll('$store', store).replaceAll('$model', modelId);
  for (const step of SCRIPT) {
    const body = typeof step.body === 'string' ? step.body : step.body && JSON.parse(fill(JSON.stringify(step.body)));
    const r = await call(base, step.method, fill(step.path), body, step.headers);
    const text = r.text.replaceAll(store, '<store>').replaceAll(modelId, '<model>');
    // Times and continuation tokens differ per run; everything else must be byte-identical.
    const stable = text
      .replace(/"(created_at|updated_at|timestamp)":"[^"]*"/g, '"$1":"<t>"')
      .replace(/"continuation_token":"[^"]*"/g, '"continuation_token":"<c>"');
    out.push(`${step.method} ${step.path} → ${r.status} ${r.headers.get('latch-revision') ?? '-'} ${stable}`);
  }
  return out;
}

describe('--http-threads', () => {
  let single: Server;
  let threaded: Server;

  beforeAll(async () => {
    single = await start({ engine: { workers: 0 } });
    threaded = await start({ engine: { workers: 0 }, httpThreads: 1, mainThreadServes: false });
  });
  afterAll(async () => {
    await single?.close();
    await threaded?.close();
  });

  it('answers every request of the script exactly as one thread does', async () => {
    const want = await runScript(single.base);
    const got = await runScript(threaded.base);
    expect(got).toEqual(want);
    // The script reaches what it means to: errors, a stream longer than the window, the revision header.
    expect(want.some((l) => l.includes('→ 400') && l.includes('validation_error'))).toBe(true);
    expect(want.some((l) => l.includes('→ 404'))).toBe(true);
    const streamed = want.find((l) => l.startsWith('POST /stores/$store/streamed-list-objects')) ?? '';
    expect(streamed.split('\n').filter((l) => l.includes('"object"'))).toHaveLength(MANY);
    expect(want[0]).toMatch(/→ 200 \d+ /);
  }, 60_000);

  it('follows live writes in a Watch served by a worker thread, and ends it on abort', async () => {
    const created = await call(threaded.base, 'POST', '/stores', { name: 'threads-watch' });
    const store = (created.json as { id: string }).id;
    await call(threaded.base, 'POST', `/stores/${store}/authorization-models`, MODEL);
    const abort = new AbortController();
    const r = await fetch(`${threaded.base}/stores/${store}/watch?heartbeat_ms=5000`, { signal: abort.signal });
    expect(r.status).toBe(200);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    await call(threaded.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [key('user:zoe', 'owner', 'doc:9')] },
    });
    let text = '';
    while (!text.includes('user:zoe')) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    expect(text).toContain('"object":"doc:9"');
    abort.abort();
    await reader.cancel().catch(() => undefined);
  });

  it('serves the msgpack channel (checks as ids) from a worker thread', async () => {
    const created = await call(threaded.base, 'POST', '/stores', { name: 'threads-channel' });
    const store = (created.json as { id: string }).id;
    await call(threaded.base, 'POST', `/stores/${store}/authorization-models`, MODEL);
    await call(threaded.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [key('user:anne', 'owner', 'doc:1')] },
    });
    const client = await LatchChannelClient.connect(`ws://127.0.0.1:${threaded.port}/stream`);
    try {
      expect(await client.check(store, key('user:anne', 'viewer', 'doc:1'))).toBe(true);
      expect(await client.check(store, key('user:bob', 'viewer', 'doc:1'))).toBe(false);
      // Strings sent before are known to the main thread's copy of the connection's table.
      expect(await client.check(store, key('user:anne', 'owner', 'doc:1'))).toBe(true);
      await expect(client.check(store, key('user:anne', 'nope', 'doc:1'))).rejects.toMatchObject({
        code: 'validation_error',
      });
    } finally {
      await client.close();
    }
  });
});

describe('--http-threads with the main thread serving too', () => {
  it('binds the one port from both threads and answers on every connection', async () => {
    const server = await start({ engine: { workers: 0 }, httpThreads: 2 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 16 }, () => call(server.base, 'GET', '/stores', undefined, { connection: 'close' })),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
    } finally {
      await server.close();
    }
  });

  it('refuses a second process on the port, as one thread does', async () => {
    const server = await start({ httpThreads: 2 });
    try {
      await expect(start({ port: server.port, httpThreads: 2 })).rejects.toThrow(/already in use/);
    } finally {
      await server.close();
    }
  });
});

describe('--http-threads and auth', () => {
  const preshared = 'p'.repeat(24);

  it('enforces preshared keys on a worker thread', async () => {
    const server = await start({
      httpThreads: 1,
      mainThreadServes: false,
      auth: { mode: 'preshared', presharedKeys: [preshared], logRetentionDays: 0 },
    });
    try {
      const denied = await call(server.base, 'GET', '/stores');
      expect(denied.status).toBe(401);
      expect((denied.json as { code: string }).code).toBe('bearer_token_missing');
      const ok = await call(server.base, 'GET', '/stores', undefined, { authorization: `Bearer ${preshared}` });
      expect(ok.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('refuses auth state that would be per thread (store logs, rate limits, client-credentials)', async () => {
    await expect(start({ httpThreads: 2, auth: { mode: 'preshared', presharedKeys: [preshared] } })).rejects.toThrow(
      /log-retention-days/,
    );
    expect(() => parseServeArgs(['--http-threads', '2', '--rate-limits', 'check=200:400'], {})).toThrow(UsageError);
    expect(() => parseServeArgs(['--http-threads', '2'], {})).not.toThrow();
    expect(parseServeArgs(['--http-threads', '3'], {}).server.httpThreads).toBe(3);
  });
});

/** Nesting, a wildcard, a tuple-to-userset, an exclusion and a condition: every walker path a Check can take. */
const LOCAL_MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'group',
      relations: { member: { this: {} } },
      metadata: {
        relations: {
          member: {
            directly_related_user_types: [
              { type: 'user' },
              { type: 'user', wildcard: {} },
              { type: 'group', relation: 'member' },
            ],
          },
        },
      },
    },
    {
      type: 'folder',
      relations: { viewer: { this: {} } },
      metadata: {
        relations: {
          viewer: { directly_related_user_types: [{ type: 'user' }, { type: 'group', relation: 'member' }] },
        },
      },
    },
    {
      type: 'doc',
      relations: {
        parent: { this: {} },
        owner: { this: {} },
        blocked: { this: {} },
        viewer: {
          union: {
            child: [
              { this: {} },
              { computedUserset: { relation: 'owner' } },
              { tupleToUserset: { tupleset: { relation: 'parent' }, computedUserset: { relation: 'viewer' } } },
            ],
          },
        },
        can_view: {
          difference: {
            base: { computedUserset: { relation: 'viewer' } },
            subtract: { computedUserset: { relation: 'blocked' } },
          },
        },
      },
      metadata: {
        relations: {
          parent: { directly_related_user_types: [{ type: 'folder' }] },
          owner: { directly_related_user_types: [{ type: 'user' }] },
          blocked: { directly_related_user_types: [{ type: 'user' }] },
          viewer: {
            directly_related_user_types: [
              { type: 'user' },
              { type: 'user', wildcard: {} },
              { type: 'group', relation: 'member' },
              { type: 'user', condition: 'office' },
            ],
          },
        },
      },
    },
  ],
  conditions: {
    office: { name: 'office', expression: 'ip == "10.0.0.1"', parameters: { ip: { type_name: 'TYPE_NAME_STRING' } } },
  },
};

/** A deterministic pseudo-random sequence (the same tuples and checks on both servers). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

function localTuples(): Record<string, unknown>[] {
  const rnd = lcg(7);
  const pick = (n: number): number => Math.floor(rnd() * n);
  const out: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  const add = (t: Record<string, unknown>): void => {
    const k = JSON.stringify(t);
    if (seen.has(k)) return;
    seen.add(k);
    out.push(t);
  };
  for (let i = 0; i < 60; i++) add(key(`user:u${pick(12)}`, 'member', `group:g${pick(5)}`));
  for (let i = 0; i < 6; i++) add(key(`group:g${i % 4}#member`, 'member', `group:g${(i % 4) + 1}`));
  add(key('user:*', 'member', 'group:g4'));
  for (let i = 0; i < 20; i++) add(key(`group:g${pick(5)}#member`, 'viewer', `folder:f${pick(6)}`));
  for (let i = 0; i < 40; i++) add(key(`folder:f${pick(6)}`, 'parent', `doc:d${pick(30)}`));
  for (let i = 0; i < 40; i++)
    add(key(`user:u${pick(12)}`, ['owner', 'viewer', 'blocked'][pick(3)] as string, `doc:d${pick(30)}`));
  add(key('user:*', 'viewer', 'doc:d29'));
  add({ ...key('user:cond', 'viewer', 'doc:cond'), condition: { name: 'office' } });
  return out;
}

/** Plain Checks (answered on the thread) across every path, unseen strings and invalid keys included. */
function localChecks(): Record<string, unknown>[] {
  const rnd = lcg(11);
  const pick = (n: number): number => Math.floor(rnd() * n);
  const users = ['user:u0', 'user:u5', 'user:u11', 'user:new', 'user:*', 'group:g1#member', 'group:g4#member'];
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < 150; i++)
    out.push({
      tuple_key: key(
        users[pick(users.length)] as string,
        ['viewer', 'can_view', 'owner'][pick(3)] as string,
        `doc:d${pick(32)}`,
      ),
    });
  out.push({ tuple_key: key('user:u1', 'nope', 'doc:d1') });
  out.push({ tuple_key: key('user:u1', 'viewer', 'nosuch:1') });
  out.push({ tuple_key: key('user:u1', 'member', 'group:g9') });
  return out;
}

describe('--http-threads: Check from the shared index', () => {
  let single: Server;
  let threaded: Server;
  /** Check, checkSync and batchCheck calls that reached the threaded server's main-thread engine. */
  let forwarded = 0;

  beforeAll(async () => {
    single = await start({ engine: { workers: 0 } });
    threaded = await start({ engine: { workers: 0 }, httpThreads: 1, mainThreadServes: false });
    const latch = threaded.latch as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const op of ['check', 'checkSync', 'batchCheck']) {
      const fn = latch[op] as (...a: unknown[]) => unknown;
      latch[op] = (...a: unknown[]) => {
        forwarded++;
        return fn(...a);
      };
    }
  });
  afterAll(async () => {
    await single?.close();
    await threaded?.close();
  });

  /** The store on both servers with the same tuples; the answers of `path` for `bodies` on each, side by side. */
  async function both(
    stores: readonly [string, string],
    path: string,
    bodies: readonly Record<string, unknown>[],
  ): Promise<{ want: string[]; got: string[] }> {
    const want: string[] = [];
    const got: string[] = [];
    for (const body of bodies) {
      for (const [server, store, into] of [
        [single, stores[0], want],
        [threaded, stores[1], got],
      ] as const) {
        const r = await call(server.base, 'POST', `/stores/${store}${path}`, body);
        into.push(`${r.status} ${r.headers.get('latch-revision') ?? '-'} ${r.text.replaceAll(store, '<store>')}`);
      }
    }
    return { want, got };
  }

  async function storeOn(server: Server): Promise<string> {
    const created = await call(server.base, 'POST', '/stores', { name: 'local' });
    const store = (created.json as { id: string }).id;
    const m = await call(server.base, 'POST', `/stores/${store}/authorization-models`, LOCAL_MODEL);
    expect(m.status).toBe(201);
    const tuples = localTuples();
    for (let i = 0; i < tuples.length; i += 50) {
      const w = await call(server.base, 'POST', `/stores/${store}/write`, {
        writes: { tuple_keys: tuples.slice(i, i + 50) },
      });
      expect(w.text).toBe('{}');
    }
    return store;
  }

  it('answers plain Checks and BatchChecks on the worker thread, identical to one thread', async () => {
    const stores = [await storeOn(single), await storeOn(threaded)] as const;
    const probe = { tuple_key: key('user:u0', 'viewer', 'doc:d0') };
    // The thread fetches the model once (forwarding meanwhile); then it answers alone.
    await vi.waitFor(async () => {
      const before = forwarded;
      const r = await call(threaded.base, 'POST', `/stores/${stores[1]}/check`, probe);
      expect(r.status).toBe(200);
      expect(forwarded).toBe(before);
    }, WAIT);
    const before = forwarded;
    const checks = await both(stores, '/check', localChecks());
    expect(checks.got).toEqual(checks.want);
    expect(checks.want.filter((l) => l.includes('"allowed":true')).length).toBeGreaterThan(10);
    expect(checks.want.filter((l) => l.includes('"allowed":false')).length).toBeGreaterThan(10);
    expect(checks.want.filter((l) => l.startsWith('400')).length).toBe(2);
    const batch = localChecks().map((c, i) => ({ ...c, correlation_id: `c${i}` }));
    const batches = await both(stores, '/batch-check', [{ checks: batch.slice(0, 50) }, { checks: batch.slice(50) }]);
    expect(batches.got).toEqual(batches.want);
    expect(forwarded).toBe(before);
  }, 60_000);

  it('forwards what needs the main thread, with the same answers', async () => {
    const stores = [await storeOn(single), await storeOn(threaded)] as const;
    const probe = { tuple_key: key('user:u0', 'viewer', 'doc:d0') };
    await vi.waitFor(async () => {
      const before = forwarded;
      await call(threaded.base, 'POST', `/stores/${stores[1]}/check`, probe);
      expect(forwarded).toBe(before);
    }, WAIT);
    const needMain = [
      // a tuple condition met on the walk, with and without its parameter
      { tuple_key: key('user:cond', 'viewer', 'doc:cond'), context: { ip: '10.0.0.1' } },
      { tuple_key: key('user:cond', 'viewer', 'doc:cond') },
      { tuple_key: key('user:u0', 'viewer', 'doc:d0'), consistency: 'HIGHER_CONSISTENCY' },
      {
        tuple_key: key('user:u0', 'viewer', 'doc:d0'),
        contextual_tuples: { tuple_keys: [key('user:u0', 'owner', 'doc:d0')] },
      },
    ];
    for (const body of needMain) {
      const before = forwarded;
      const r = await both(stores, '/check', [body]);
      expect(r.got).toEqual(r.want);
      expect(forwarded, JSON.stringify(body)).toBeGreaterThan(before);
    }
  }, 60_000);

  it('sees an acknowledged write at once, and a deleted store is gone', async () => {
    const store = await storeOn(threaded);
    const ask = { tuple_key: key('user:fresh', 'viewer', 'doc:fresh') };
    await vi.waitFor(async () => {
      const before = forwarded;
      await call(threaded.base, 'POST', `/stores/${store}/check`, ask);
      expect(forwarded).toBe(before);
    }, WAIT);
    for (let i = 0; i < 20; i++) {
      const user = `user:fresh${i}`;
      const denied = await call(threaded.base, 'POST', `/stores/${store}/check`, {
        tuple_key: key(user, 'viewer', `doc:new${i}`),
      });
      expect(denied.json).toEqual({ allowed: false, resolution: '' });
      const w = await call(threaded.base, 'POST', `/stores/${store}/write`, {
        writes: { tuple_keys: [key(user, 'owner', `doc:new${i}`)] },
      });
      expect(w.status).toBe(200);
      const before = forwarded;
      const allowed = await call(threaded.base, 'POST', `/stores/${store}/check`, {
        tuple_key: key(user, 'viewer', `doc:new${i}`),
      });
      expect(allowed.json).toEqual({ allowed: true, resolution: '' });
      expect(forwarded).toBe(before);
    }
    const revision = await call(threaded.base, 'POST', `/stores/${store}/check`, ask, { 'Latch-Min-Revision': '1' });
    expect(revision.status).toBe(200);
    expect(await call(threaded.base, 'DELETE', `/stores/${store}`)).toMatchObject({ status: 204 });
    const gone = await call(threaded.base, 'POST', `/stores/${store}/check`, ask);
    expect(gone.status).toBe(404);
    expect((gone.json as { code: string }).code).toBe('store_id_not_found');
  }, 60_000);
});

/** The value of the sample `name{labels}` (0 when the series is absent) in a Prometheus text. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('--http-threads: /metrics counts every thread', () => {
  /** Calls of the main thread's check and checkSync (a Check a thread forwarded). */
  let forwarded = 0;
  const servers: Server[] = [];

  /** Two HTTP threads share the port and the main thread serves none of it. */
  async function threaded(options: Parameters<typeof start>[0]): Promise<Server> {
    const server = await start({ engine: { workers: 0 }, httpThreads: 2, mainThreadServes: false, ...options });
    servers.push(server);
    const latch = server.latch as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const op of ['check', 'checkSync']) {
      const fn = latch[op] as (...a: unknown[]) => unknown;
      latch[op] = (...a: unknown[]) => {
        forwarded++;
        return fn(...a);
      };
    }
    return server;
  }
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  /**
   * N Checks the threads answer themselves, and one bad request; /metrics read at `metricsBase`.
   * `mainScrapes`: the main thread renders it, so the engine's own figures in it are current (a
   * thread's copy of them is refreshed every second) and the result-cache lookups add up exactly.
   */
  async function countsExactly(server: Server, metricsBase: string, mainScrapes: boolean): Promise<void> {
    const store = (await call(server.base, 'POST', '/stores', { name: 'metrics' })).json as { id: string };
    expect((await call(server.base, 'POST', `/stores/${store.id}/authorization-models`, MODEL)).status).toBe(201);
    const w = await call(server.base, 'POST', `/stores/${store.id}/write`, {
      writes: { tuple_keys: [key('user:anne', 'owner', 'doc:1')] },
    });
    expect(w.status).toBe(200);
    // A new connection each: the kernel spreads them over both threads.
    const check = (tuple: ReturnType<typeof key>): ReturnType<typeof call> =>
      call(server.base, 'POST', `/stores/${store.id}/check`, { tuple_key: tuple }, { connection: 'close' });
    // Until both threads hold the model a Check may be forwarded (counted as well); the Checks
    // counted below are all answered on the threads.
    await vi.waitFor(async () => {
      const before = forwarded;
      for (let i = 0; i < 8; i++) expect((await check(key('user:anne', 'viewer', 'doc:1'))).status).toBe(200);
      expect(forwarded).toBe(before);
    }, WAIT);
    const scrape = async (): Promise<string> => (await call(metricsBase, 'GET', '/metrics')).text;
    const ok = 'latch_http_requests_total{endpoint="Check",status="200"}';
    const bad = 'latch_http_requests_total{endpoint="Check",status="400"}';
    const lookups = (t: string): number =>
      sample(t, 'latch_check_cache_hits_total') + sample(t, 'latch_check_cache_misses_total');
    const before = await scrape();
    const forwardedBefore = forwarded;
    const N = 41;
    for (let i = 0; i < N; i++) {
      const r = await check(key(i % 2 === 0 ? 'user:anne' : `user:u${i}`, 'viewer', 'doc:1'));
      expect(r.json).toEqual({ allowed: i % 2 === 0, resolution: '' });
    }
    const invalid = await check(key('user:anne', 'nope', 'doc:1'));
    expect((invalid.json as { code: string }).code).toBe('validation_error');
    expect(forwarded).toBe(forwardedBefore);
    // Counted once its thread has finished the request (the reply may reach the client first).
    await vi.waitFor(async () => {
      const after = await scrape();
      expect(sample(after, ok) - sample(before, ok)).toBe(N);
      expect(sample(after, bad) - sample(before, bad)).toBe(1);
      expect(sample(after, 'latch_http_requests_in_flight')).toBe(0);
    }, WAIT);
    if (mainScrapes) {
      // Every Check answered on a thread looked its result cache up once: a hit or a miss.
      expect(lookups(await scrape()) - lookups(before)).toBe(N);
    }
  }

  it('shows N Checks answered on the threads as N, scraped from a thread on the API port', async () => {
    const server = await threaded({});
    await countsExactly(server, server.base, false);
  }, 60_000);

  it('shows them on the metrics address the main thread serves (--metrics-addr)', async () => {
    const server = await threaded({ metricsAddress: { host: '127.0.0.1', port: 0 } });
    await countsExactly(server, `http://127.0.0.1:${server.metricsPort as number}`, true);
    // The API port serves no /metrics then.
    expect((await call(server.base, 'GET', '/metrics')).status).toBe(404);
  }, 60_000);
});

describe("--http-threads: an HTTP thread's /metrics", () => {
  it("shows the main thread's GC pauses: the thread observes none of its own", async () => {
    const data = MetricsShare.create(['Check', 'unmatched'], 2);
    const minor = (m: Metrics): number => sample(m.render(undefined), 'latch_gc_pause_seconds_count{kind="minor"}');
    const gcLines = (m: Metrics): string =>
      m
        .render(undefined)
        .split('\n')
        .filter((l) => l.startsWith('latch_gc_pause_seconds'))
        .join('\n');
    /** Garbage on this thread until `counted` sees a scavenge more than `from`. */
    const scavenge = async (counted: () => number, from: number): Promise<void> => {
      let keep: unknown[] = [];
      await vi.waitFor(() => {
        for (let i = 0; i < 20_000; i++) keep.push({ i });
        keep = [];
        expect(counted()).toBeGreaterThan(from);
      }, WAIT);
    };
    let seen = 0;
    const observer = new PerformanceObserver((list) => void (seen += list.getEntries().length));
    observer.observe({ entryTypes: ['gc'] });
    const thread = new Metrics(['Check'], new MetricsShare(data, 1));
    try {
      await scavenge(() => seen, 0);
      expect(minor(thread)).toBe(0);
      const main = new Metrics(['Check'], new MetricsShare(data, 0));
      try {
        await scavenge(() => minor(main), 0);
        // Both render the share's words (a pause between the two renders: read again).
        await vi.waitFor(() => expect(gcLines(thread)).toBe(gcLines(main)), WAIT);
      } finally {
        main.close();
      }
    } finally {
      observer.disconnect();
      thread.close();
    }
  });
});
