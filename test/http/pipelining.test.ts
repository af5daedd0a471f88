// HTTP/1.1 pipelining as docs/reference/http-api.md §1.1 documents it: uWebSockets.js pipelines
// only answers written at once. Checks on a loaded store are answered in the request's own turn,
// so many of them in one TCP write are all answered, in order, on one connection. A request that
// arrives while an earlier answer still waits on the datastore (a Write on LevelDB) makes uWS
// close the connection, and the pending answer is lost with it. This pins that contract: if the
// HTTP layer ever pipelines pending answers, the second test fails and the reference must change.

import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let dir = '';
let store = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'latch-pipelining-'));
  server = await start({ datastore: 'leveldb', dataDir: dir });
  store = await storeWithModel(server.base, 'pipelining');
  const w = await call(server.base, 'POST', `/stores/${store}/write`, {
    writes: { tuple_keys: [{ user: 'user:anne', relation: 'owner', object: 'doc:1' }] },
  });
  expect(w.status, w.text).toBe(200);
  // The first Check loads the store's index; the ones after it are answered at once.
  const c = await call(server.base, 'POST', `/stores/${store}/check`, checkBody('user:anne'));
  expect(c.json).toMatchObject({ allowed: true });
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function checkBody(user: string): Record<string, unknown> {
  return { tuple_key: { user, relation: 'viewer', object: 'doc:1' } };
}

function post(path: string, body: Record<string, unknown>): string {
  const json = JSON.stringify(body);
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  );
}

/**
 * Writes `requests` in one TCP write and reads until `want` answers have arrived (the connection
 * stays open) or the server closed it: what arrived, and whether it was closed.
 */
function pipeline(requests: readonly string[], want: number): Promise<{ raw: string; closed: boolean }> {
  const { port } = new URL(server.base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(requests.join('')));
    let raw = '';
    let settled = false;
    const settle = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ raw, closed });
    };
    socket.on('data', (d: Buffer) => {
      raw += d.toString('latin1');
      if (answers(raw).length >= want) settle(false);
    });
    socket.on('close', () => settle(true));
    socket.on('error', reject);
  });
}

/** The complete answers in `raw`: status and body of each. */
function answers(raw: string): { status: number; body: string }[] {
  const out: { status: number; body: string }[] = [];
  let at = 0;
  for (;;) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end === -1) return out;
    const head = raw.slice(at, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) throw new Error(`an answer without Content-Length: ${head.slice(0, 200)}`);
    const bodyEnd = end + 4 + Number(length[1]);
    if (raw.length < bodyEnd) return out;
    out.push({ status: Number(head.slice(9, 12)), body: raw.slice(end + 4, bodyEnd) });
    at = bodyEnd;
  }
}

describe('HTTP/1.1 pipelining', () => {
  test('Checks answered at once: every answer, in order, on one connection', async () => {
    const users = Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? 'user:anne' : `user:u${i}`));
    const { raw, closed } = await pipeline(
      users.map((u) => post(`/stores/${store}/check`, checkBody(u))),
      users.length,
    );
    expect(closed).toBe(false);
    const got = answers(raw);
    expect(got.map((a) => a.status)).toEqual(users.map(() => 200));
    expect(got.map((a) => (JSON.parse(a.body) as { allowed: boolean }).allowed)).toEqual(
      users.map((u) => u === 'user:anne'),
    );
  });

  test('a request behind an answer that waits on the datastore: the connection is closed', async () => {
    const writes = Array.from({ length: 4 }, (_, i) =>
      post(`/stores/${store}/write`, {
        writes: { tuple_keys: [{ user: `user:w${i}`, relation: 'owner', object: 'doc:2' }] },
      }),
    );
    const { raw, closed } = await pipeline(writes, writes.length);
    expect(closed).toBe(true);
    expect(answers(raw)).toEqual([]);
    // The server is unharmed: a new connection is answered.
    const c = await call(server.base, 'POST', `/stores/${store}/check`, checkBody('user:anne'));
    expect(c.json).toMatchObject({ allowed: true });
  });
});
