// Watch (GET /stores/{id}/watch) against a real server: every change once, in changelog order,
// each with a token that resumes right after it; live changes; filters; heartbeats; reconnects
// during a write burst; a slow consumer; shutdown; bad input.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, stalledResponse, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
interface Line {
  result?: {
    change?: { tuple_key: { object: string; relation: string; user: string }; operation: string };
    heartbeat?: { continuation_token: string };
    continuation_token?: string;
  };
  error?: { code: number; message: string };
}

/** An open watch: lines one at a time, in order. */
class Watch {
  readonly #abort = new AbortController();
  readonly #lines: Line[] = [];
  #waiters: (() => void)[] = [];
  #ended = false;
  status = 0;

  static async open(base: string, path: string): Promise<Watch> {
    const w = new Watch();
    const r = await fetch(base + path, { signal: w.#abort.signal });
    w.status = r.status;
    void w.#pump(r.body as ReadableStream<Uint8Array>);
    return w;
  }

  async #pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of body) {
        buf += dec.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) !== -1) {
          this.#lines.push(JSON.parse(buf.slice(0, nl)) as Line);
          buf = buf.slice(nl + 1);
        }
        this.#wake();
      }
    } catch {
      // aborted by close()
    }
    this.#ended = true;
    this.#wake();
  }

  #wake(): void {
    const ws = this.#waiters;
    this.#waiters = [];
    for (const w of ws) w();
  }

  /** The next line; undefined once the stream ended. */
  async next(): Promise<Line | undefined> {
    while (this.#lines.length === 0 && !this.#ended) await new Promise<void>((r) => this.#waiters.push(r));
    return this.#lines.shift();
  }

  /** The next n changes (heartbeats skipped), each with its token. */
  async changes(n: number): Promise<{ text: string; token: string }[]> {
    const out: { text: string; token: string }[] = [];
    while (out.length < n) {
      const line = await this.next();
      if (!line) throw new Error(`stream ended after ${out.length} of ${n} changes`);
      if (line.error) throw new Error(`error line: ${JSON.stringify(line.error)}`);
      const c = line.result?.change;
      if (c) out.push({ text: render(c), token: line.result?.continuation_token ?? '' });
    }
    return out;
  }

  /** Asserts that the next line is a heartbeat (nothing more to read) and returns its token. */
  async heartbeat(): Promise<string> {
    const line = await this.next();
    expect(line?.result?.heartbeat, JSON.stringify(line)).toBeDefined();
    return line?.result?.heartbeat?.continuation_token ?? '';
  }

  close(): void {
    this.#abort.abort();
  }
}

const render = (c: { tuple_key: { object: string; relation: string; user: string }; operation: string }): string =>
  `${c.operation === 'TUPLE_OPERATION_WRITE' ? '+' : '-'}${c.tuple_key.object}#${c.tuple_key.relation}@${c.tuple_key.user}`;

async function write(base: string, store: string, writes: string[], deletes: string[] = []): Promise<void> {
  const key = (s: string): Record<string, string> => {
    const [object, rest] = s.split('#') as [string, string];
    const [relation, user] = rest.split('@') as [string, string];
    return { object, relation, user };
  };
  const body: Record<string, unknown> = {};
  if (writes.length) body.writes = { tuple_keys: writes.map(key) };
  if (deletes.length) body.deletes = { tuple_keys: deletes.map(key) };
  const r = await call(base, 'POST', `/stores/${store}/write`, body);
  if (r.status !== 200) throw new Error(`write: ${r.status} ${r.text}`);
}

/** Every change of the store, through ReadChanges. */
async function changelog(base: string, store: string, type = ''): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  for (;;) {
    const r = await call(
      base,
      'GET',
      `/stores/${store}/changes?page_size=100${type ? `&type=${type}` : ''}${token ? `&continuation_token=${token}` : ''}`,
    );
    const body = r.json as {
      changes: { tuple_key: { object: string; relation: string; user: string }; operation: string }[];
      continuation_token: string;
    };
    if (body.changes.length === 0) return out;
    out.push(...body.changes.map(render));
    token = body.continuation_token;
  }
}

let server: Server;
beforeAll(async () => {
  server = await start({ watchStallMs: 300 });
});
afterAll(async () => {
  await server.close();
});

describe('Watch', () => {
  it('from the beginning: every change once, in order, each token resuming right after its change', async () => {
    const store = await storeWithModel(server.base, 'watch-all');
    await write(server.base, store, ['doc:1#viewer@user:anne', 'doc:2#viewer@user:bob']);
    await write(server.base, store, ['doc:3#owner@user:carl'], ['doc:1#viewer@user:anne']);
    const all = await changelog(server.base, store);
    expect(all).toEqual([
      '+doc:1#viewer@user:anne',
      '+doc:2#viewer@user:bob',
      '-doc:1#viewer@user:anne',
      '+doc:3#owner@user:carl',
    ]);
    const w = await Watch.open(server.base, `/stores/${store}/watch?heartbeat_ms=100`);
    expect(w.status).toBe(200);
    expect(await w.heartbeat()).toBe(''); // the opening heartbeat: nothing read yet
    const got = await w.changes(all.length);
    expect(got.map((c) => c.text)).toEqual(all);
    expect(await w.heartbeat()).toBe(got[got.length - 1]?.token); // caught up: nothing more
    w.close();
    for (let i = 0; i < got.length; i++) {
      const resumed = await Watch.open(
        server.base,
        `/stores/${store}/watch?heartbeat_ms=100&continuation_token=${got[i]?.token}`,
      );
      expect(await resumed.heartbeat()).toBe(got[i]?.token);
      expect((await resumed.changes(all.length - i - 1)).map((c) => c.text)).toEqual(all.slice(i + 1));
      await resumed.heartbeat();
      resumed.close();
    }
  });

  it('follows live writes; its tokens are ReadChanges tokens', async () => {
    const store = await storeWithModel(server.base, 'watch-live');
    const w = await Watch.open(server.base, `/stores/${store}/watch?heartbeat_ms=5000`);
    await w.heartbeat();
    await write(server.base, store, ['doc:9#viewer@user:zoe']);
    const [c] = await w.changes(1);
    expect(c?.text).toBe('+doc:9#viewer@user:zoe');
    await write(server.base, store, ['doc:10#viewer@user:zoe']);
    const r = await call(server.base, 'GET', `/stores/${store}/changes?continuation_token=${c?.token}`);
    expect((r.json as { changes: unknown[] }).changes).toHaveLength(1);
    expect((await w.changes(1))[0]?.text).toBe('+doc:10#viewer@user:zoe');
    w.close();
  });

  it('type filter and start_time', async () => {
    const store = await storeWithModel(server.base, 'watch-filter');
    // The two writes one millisecond apart on an injected clock (Date only: timers and sockets stay
    // real), a minute in the past (a start_time must be before now); the clock is real again before
    // the watches open, whose heartbeats follow it.
    const t0 = Date.now() - 60_000;
    vi.useFakeTimers({ toFake: ['Date'], now: t0 });
    try {
      await write(server.base, store, ['doc:1#viewer@user:anne', 'group:a#member@user:anne']);
      vi.setSystemTime(t0 + 1);
      await write(server.base, store, ['group:b#member@user:bob', 'doc:2#viewer@user:bob']);
    } finally {
      vi.useRealTimers();
    }
    const t = new Date(t0 + 1).toISOString();
    const stamped = await call(server.base, 'GET', `/stores/${store}/changes`);
    expect((stamped.json as { changes: { timestamp: string }[] }).changes.map((c) => c.timestamp)).toEqual([
      new Date(t0).toISOString(),
      new Date(t0).toISOString(),
      t,
      t,
    ]);
    const w = await Watch.open(server.base, `/stores/${store}/watch?type=group&heartbeat_ms=100`);
    await w.heartbeat();
    expect((await w.changes(2)).map((c) => c.text)).toEqual(['+group:a#member@user:anne', '+group:b#member@user:bob']);
    await w.heartbeat();
    w.close();
    const since = await Watch.open(server.base, `/stores/${store}/watch?start_time=${t}&heartbeat_ms=100`);
    await since.heartbeat();
    expect((await since.changes(2)).map((c) => c.text)).toEqual(['+group:b#member@user:bob', '+doc:2#viewer@user:bob']);
    await since.heartbeat();
    since.close();
  });

  it('a consumer that reconnects a hundred times during a write burst ends with exactly the changelog', async () => {
    const store = await storeWithModel(server.base, 'watch-burst');
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 400; i++) {
        const dels = i % 4 === 3 ? [`doc:${i - 1}#viewer@user:u${i - 1}`] : [];
        await write(server.base, store, [`doc:${i}#viewer@user:u${i}`, `doc:${i}#owner@user:o${i}`], dels);
      }
      writing = false;
    })();
    const seen: string[] = [];
    let token = '';
    let reconnects = 0;
    let seed = 3;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    while (reconnects < 100 || writing) {
      const w = await Watch.open(
        server.base,
        `/stores/${store}/watch?heartbeat_ms=100${token ? `&continuation_token=${token}` : ''}`,
      );
      await w.heartbeat();
      const want = 1 + rand(6);
      for (let k = 0; k < want; k++) {
        const line = await w.next();
        if (line?.result?.heartbeat) break; // caught up for now
        const c = line?.result?.change;
        if (!c) throw new Error(`unexpected line ${JSON.stringify(line)}`);
        seen.push(render(c));
        token = line?.result?.continuation_token ?? '';
      }
      w.close();
      reconnects++;
    }
    await writer;
    const last = await Watch.open(
      server.base,
      `/stores/${store}/watch?heartbeat_ms=100${token ? `&continuation_token=${token}` : ''}`,
    );
    await last.heartbeat();
    for (let line = await last.next(); line?.result?.change; line = await last.next())
      seen.push(render(line.result.change));
    last.close();
    const log = await changelog(server.base, store);
    expect(log).toHaveLength(400 * 2 + 100);
    expect(reconnects).toBeGreaterThanOrEqual(100);
    expect(seen).toEqual(log);
  });

  it('a store deleted mid-stream ends it with store_id_not_found', async () => {
    const store = await storeWithModel(server.base, 'watch-deleted');
    const w = await Watch.open(server.base, `/stores/${store}/watch?heartbeat_ms=100`);
    await w.heartbeat();
    expect((await call(server.base, 'DELETE', `/stores/${store}`)).status).toBe(204);
    let line = await w.next();
    while (line?.result?.heartbeat) line = await w.next();
    expect(line?.error?.code).toBe(5); // gRPC NOT_FOUND
    expect(await w.next()).toBeUndefined();
  });

  it('a consumer that reads nothing is told why and its stream ends; the server holds one line for it', async () => {
    const store = await storeWithModel(server.base, 'watch-slow');
    // ~12 MB of change lines: more than the loopback socket buffers hold.
    const long = 'x'.repeat(480);
    for (let i = 0; i < 200; i++) {
      await server.latch.write({
        storeId: store,
        writes: Array.from({ length: 100 }, (_, k) => ({
          object: `doc:${i}_${k}`,
          relation: 'viewer',
          user: `user:${long}${k}`,
        })),
        deletes: [],
        onDuplicate: 'error',
        onMissing: 'error',
      });
    }
    // The stream is in flight, then the server ends it once the consumer stalled for 300 ms.
    const raw = await stalledResponse(server, `GET /stores/${store}/watch HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const text = raw.toString('latin1');
    const lines = text.split('\n').filter((l) => l.startsWith('{"'));
    const lastLine = JSON.parse(lines[lines.length - 1] ?? '{}') as Line;
    expect(lastLine.error?.code).toBe(8); // gRPC RESOURCE_EXHAUSTED, as docs/watch.md names it
    expect(lines.length - 1).toBeLessThan(20_000); // stopped long before the end of the backlog
  }, 180_000); // ~12 MB of backlog: seconds on a quiet machine, much longer on a loaded one

  it('bad input: 400 with its message; unknown store 404', async () => {
    const store = await storeWithModel(server.base, 'watch-bad');
    const other = await storeWithModel(server.base, 'watch-bad-other');
    await write(server.base, other, ['doc:1#viewer@user:anne']);
    const otherToken = (
      (await call(server.base, 'GET', `/stores/${other}/changes`)).json as { continuation_token: string }
    ).continuation_token;
    const typedToken = (
      (await call(server.base, 'GET', `/stores/${other}/changes?type=doc`)).json as { continuation_token: string }
    ).continuation_token;
    // Errors before the first line: the HTTP status and one `{"error": {code (gRPC), message}}` line (§4.18).
    const cases: { path: string; status: number; message: string }[] = [
      {
        path: `/stores/${store}/watch?continuation_token=not-a-token`,
        status: 400,
        message: 'Invalid continuation token',
      },
      {
        path: `/stores/${store}/watch?continuation_token=${otherToken}`,
        status: 400,
        message: 'Invalid continuation token',
      },
      {
        path: `/stores/${other}/watch?continuation_token=${typedToken}`,
        status: 400,
        message: "The type in the querystring and the continuation token don't match",
      },
      {
        path: `/stores/${store}/watch?heartbeat_ms=50`,
        status: 400,
        message: 'invalid WatchRequest.HeartbeatMs: value must be inside range [100, 8000]',
      },
      {
        path: `/stores/${store}/watch?heartbeat_ms=9000`,
        status: 400,
        message: 'invalid WatchRequest.HeartbeatMs: value must be inside range [100, 8000]',
      },
      {
        path: `/stores/${store}/watch?start_time=yesterday`,
        status: 400,
        message: 'invalid WatchRequest.StartTime: value is not a valid timestamp',
      },
      {
        path: `/stores/${store}/watch?type=a:b`,
        status: 400,
        message: 'invalid WatchRequest.Type: value does not match regex pattern',
      },
      { path: '/stores/01ARZ3NDEKTSV4RRFFQ69G5FAV/watch', status: 404, message: 'Store ID not found' },
    ];
    for (const c of cases) {
      const r = await call(server.base, 'GET', c.path);
      const err = (JSON.parse(r.text.split('\n')[0] ?? '{}') as Line).error;
      expect({
        path: c.path,
        status: r.status,
        code: err?.code,
        message: err?.message.slice(0, c.message.length),
      }).toEqual({ path: c.path, status: c.status, code: c.status === 404 ? 5 : 3, message: c.message });
    }
  });
});

describe('Watch at shutdown', () => {
  it('an open stream ends with an unavailable line and the server stops without waiting for it', async () => {
    const s = await start();
    const store = await storeWithModel(s.base, 'watch-shutdown');
    const w = await Watch.open(s.base, `/stores/${store}/watch`);
    await w.heartbeat();
    // A grace far beyond the test's timeout: close() returns only because the stream ended at once.
    await s.close(600_000);
    const line = await w.next();
    expect(line?.error?.code).toBe(14); // gRPC UNAVAILABLE
  });
});
