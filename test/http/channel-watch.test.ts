// Watch on the msgpack channel through `latch/client`: the same events and tokens as over HTTP,
// live changes, cancel by leaving the loop, errors as ChannelError, a stalled consumer, shutdown.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ChannelError, LatchChannelClient, type WatchEvent } from '../../src/client/index.js';
import { MiniWebSocket } from '../../src/client/ws.js';
import { decodeMsgpack, encodeMsgpack } from '../../src/domain/msgpack.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let client: LatchChannelClient;

const key = (s: string): { object: string; relation: string; user: string } => {
  const [object, rest] = s.split('#') as [string, string];
  const [relation, user] = rest.split('@') as [string, string];
  return { object, relation, user };
};

async function write(store: string, ...tuples: string[]): Promise<void> {
  const r = await call(server.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: tuples.map(key) } });
  expect(r.status).toBe(200);
}

const text = (e: WatchEvent): string =>
  'change' in e
    ? `+${e.change.tuple_key.object}#${e.change.tuple_key.relation}@${e.change.tuple_key.user}`
    : 'heartbeat';

beforeAll(async () => {
  server = await start({ channel: { maxBuffered: 64 * 1024 }, watchStallMs: 300 });
  client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

describe('Watch on the channel', () => {
  it('the backlog, then live changes; tokens equal the HTTP ones; break cancels on the server', async () => {
    const store = await storeWithModel(server.base, 'chan-watch');
    await write(store, 'doc:1#viewer@user:anne', 'doc:2#viewer@user:bob');
    const http = ((await call(server.base, 'GET', `/stores/${store}/changes`)).json as { continuation_token: string })
      .continuation_token;
    const seen: WatchEvent[] = [];
    for await (const e of client.watch(store, { heartbeat_ms: 5000 })) {
      seen.push(e);
      if (seen.length === 3) await write(store, 'doc:3#viewer@user:carl');
      if (seen.length === 4) break;
    }
    expect(seen.map(text)).toEqual([
      'heartbeat',
      '+doc:1#viewer@user:anne',
      '+doc:2#viewer@user:bob',
      '+doc:3#viewer@user:carl',
    ]);
    expect((seen[2] as { continuation_token: string }).continuation_token).toBe(http);
    // Leaving the loop cancelled the stream on the server: nothing is in flight there any more.
    await vi.waitFor(() => expect(server.inFlight()).toBe(0), { timeout: 30_000, interval: 10 });
    const answers = await client.batch([{ op: 'read-changes', store_id: store, body: { continuation_token: http } }]);
    expect((answers[0]?.body as { changes: unknown[] }).changes).toHaveLength(1);
  });

  it('an unknown store is a ChannelError 404', async () => {
    const it = client.watch('01ARZ3NDEKTSV4RRFFQ69G5FAV');
    await expect(it.next()).rejects.toMatchObject({
      status: 404,
      code: 'store_id_not_found',
    } satisfies Partial<ChannelError>);
  });

  it('cancel answers whether a stream was found; the stream ends with {cancelled: true}', async () => {
    const store = await storeWithModel(server.base, 'chan-cancel');
    const ws = await MiniWebSocket.connect(`ws://127.0.0.1:${server.port}/stream`);
    const answers: { id: number; status: number; body?: Record<string, unknown>; more?: boolean }[] = [];
    let wake: (() => void) | undefined;
    ws.onMessage = (d) => {
      answers.push(...(decodeMsgpack(d) as typeof answers));
      wake?.();
    };
    const until = async (pred: () => boolean): Promise<void> => {
      while (!pred()) await new Promise<void>((r) => (wake = r));
    };
    ws.send(encodeMsgpack([{ id: 7, op: 'watch', store_id: store, body: { heartbeat_ms: 5000 } }]));
    await until(() => answers.some((a) => a.id === 7));
    ws.send(
      encodeMsgpack([
        { id: 8, op: 'cancel', body: { id: 7 } },
        { id: 9, op: 'cancel', body: { id: 99 } },
      ]),
    );
    await until(
      () =>
        answers.some((a) => a.id === 7 && a.more === undefined) &&
        answers.some((a) => a.id === 8) &&
        answers.some((a) => a.id === 9),
    );
    expect(answers.find((a) => a.id === 7)).toMatchObject({
      status: 200,
      more: true,
      body: { result: { heartbeat: { continuation_token: '' } } },
    });
    expect(answers.find((a) => a.id === 7 && a.more === undefined)).toEqual({
      id: 7,
      status: 200,
      body: { cancelled: true },
    });
    expect(answers.find((a) => a.id === 8)).toEqual({ id: 8, status: 200, body: { cancelled: true } });
    expect(answers.find((a) => a.id === 9)).toEqual({ id: 9, status: 200, body: { cancelled: false } });
    ws.close(1000);
  });

  it('a consumer that stops reading gets resource_exhausted as its last answer', async () => {
    const store = await storeWithModel(server.base, 'chan-slow');
    const long = 'y'.repeat(480);
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
    const ws = await MiniWebSocket.connect(`ws://127.0.0.1:${server.port}/stream`);
    const frames: Buffer[] = [];
    ws.onMessage = (d) => frames.push(Buffer.from(d));
    const socket = (ws as unknown as { socket: import('node:net').Socket }).socket;
    ws.send(encodeMsgpack([{ id: 1, op: 'watch', store_id: store, body: {} }]));
    socket.pause();
    // The stream is in flight, then the server ends it once the consumer stalled for 300 ms.
    await vi.waitFor(() => expect(server.inFlight()).toBe(1), { timeout: 60_000, interval: 5 });
    await vi.waitFor(() => expect(server.inFlight()).toBe(0), { timeout: 120_000, interval: 20 });
    socket.resume();
    // The last answer is the one without `more`.
    const end = await vi.waitFor(
      () => {
        const all = frames.flatMap(
          (f) => decodeMsgpack(f) as { status: number; error?: { code: string; message: string }; more?: boolean }[],
        );
        const found = all.find((a) => a.more === undefined);
        expect(found).toBeDefined();
        return { ...found, count: all.length };
      },
      { timeout: 120_000, interval: 20 },
    );
    expect(end?.error?.code).toBe('resource_exhausted');
    expect(end?.count).toBeLessThan(20_000); // stopped long before the end of the backlog
    ws.close(1000);
  }, 180_000); // ~12 MB of backlog: seconds on a quiet machine, much longer on a loaded one

  it('at shutdown the stream ends with unavailable', async () => {
    const s = await start();
    const store = await storeWithModel(s.base, 'chan-shutdown');
    const c = await LatchChannelClient.connect(`ws://127.0.0.1:${s.port}/stream`);
    const it = c.watch(store);
    expect((await it.next()).value).toMatchObject({ heartbeat: { continuation_token: '' } });
    const closing = s.close(600_000); // far beyond the test's timeout: it returns because the stream ends at once
    await expect(it.next()).rejects.toMatchObject({ status: 503, code: 'unavailable' });
    await closing;
    await c.close();
  });
});
