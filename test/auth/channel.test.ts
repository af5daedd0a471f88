// The msgpack channel (/stream) is no way around authentication: the upgrade needs a valid
// credential, and each request of a frame is held to the token's store binding and scopes.
// Speaks RFC 6455 over a raw socket so the upgrade can carry an Authorization header.

import { Packr } from 'msgpackr';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, LatchChannelClient } from '../../src/client/index.js';
import { ALL_SCOPES, bearer, call, MODEL, startAuthServer, type AuthServer } from './fixtures.js';

const packr = new Packr({ useRecords: false });

interface Opened {
  readonly status: number;
  readonly socket: Socket;
  readonly head: string;
  /** Sends one binary frame (masked, as a client must) and resolves with the next answer frame. */
  ask(requests: unknown[]): Promise<unknown>;
}

function open(port: number, authorization?: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let waiting: ((v: unknown) => void) | undefined;
    let opened: Opened | undefined;
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (!opened) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + 4);
        opened = {
          status: Number(head.split(' ')[1]),
          socket,
          head: head + '\r\n\r\n' + buf.toString('utf8'),
          ask(requests) {
            const payload = packr.pack(requests);
            const mask = randomBytes(4);
            const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
            const len =
              payload.length < 126
                ? Buffer.from([0x80 | payload.length])
                : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 255]);
            socket.write(Buffer.concat([Buffer.from([0x82]), len, mask, masked]));
            return new Promise((r) => (waiting = r));
          },
        };
        resolve(opened);
      }
      if (waiting && buf.length >= 2) {
        let len = (buf[1] as number) & 127;
        let at = 2;
        if (len === 126) {
          len = buf.readUInt16BE(2);
          at = 4;
        }
        if (buf.length < at + len) return;
        const frame = buf.subarray(at, at + len);
        buf = buf.subarray(at + len);
        const w = waiting;
        waiting = undefined;
        w(packr.unpack(frame));
      }
    });
    const key = randomBytes(16).toString('base64');
    socket.write(
      `GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n` +
        (authorization ? `Authorization: ${authorization}\r\n` : '') +
        '\r\n',
    );
  });
}

describe('msgpack channel under client-credentials', () => {
  let s: AuthServer;
  const stores = { A: '', B: '' };
  beforeAll(async () => {
    s = await startAuthServer();
    const admin = bearer(await s.mint('*', ALL_SCOPES));
    for (const k of ['A', 'B'] as const) {
      stores[k] = (await call(s.base, 'POST', '/stores', { name: `channel-${k}` }, admin)).json!.id as string;
      await call(s.base, 'POST', `/stores/${stores[k]}/authorization-models`, MODEL, admin);
      await call(
        s.base,
        'POST',
        `/stores/${stores[k]}/write`,
        { writes: { tuple_keys: [{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }] } },
        admin,
      );
    }
  });
  afterAll(() => s.close());

  it('the upgrade without a token, or with a bad one, gets 401 and no socket', async () => {
    const none = await open(s.port);
    expect(none.status).toBe(401);
    expect(none.head).toContain('bearer_token_missing');
    none.socket.destroy();
    const bad = await open(s.port, 'Bearer garbage');
    expect(bad.status).toBe(401);
    expect(bad.head).toContain('auth_failed_invalid_bearer_token');
    bad.socket.destroy();
  });

  it('each request is held to the store binding and the scopes of the token', async () => {
    const token = await s.mint(stores.A, ['check:tuples']);
    const ws = await open(s.port, `Bearer ${token}`);
    expect(ws.status).toBe(101);
    const body = { tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' } };
    const answers = (await ws.ask([
      { id: 1, op: 'check', store_id: stores.A, body },
      { id: 2, op: 'check', store_id: stores.B, body },
      { id: 3, op: 'read', store_id: stores.A, body: {} },
      {
        id: 4,
        op: 'write',
        store_id: stores.B,
        body: { writes: { tuple_keys: [{ user: 'user:eve', relation: 'viewer', object: 'doc:1' }] } },
      },
    ])) as { id: number; status: number; body?: { allowed?: boolean }; error?: { code: string } }[];
    const byId = new Map(answers.map((a) => [a.id, a]));
    expect(byId.get(1)).toMatchObject({ status: 200, body: { allowed: true } });
    expect(byId.get(2)).toMatchObject({ status: 403, error: { code: 'store_mismatch_in_bearer_token' } });
    expect(byId.get(3)).toMatchObject({ status: 403, error: { code: 'insufficient_permissions' } });
    expect(byId.get(4)).toMatchObject({ status: 403, error: { code: 'store_mismatch_in_bearer_token' } });
    ws.socket.destroy();
    const readB = await call(s.base, 'POST', `/stores/${stores.B}/read`, {}, bearer(await s.mint('*', ALL_SCOPES)));
    expect((readB.json!.tuples as unknown[]).length).toBe(1);
  });

  it('the typed client sends its token with the upgrade; without one it cannot connect', async () => {
    const url = `ws://127.0.0.1:${s.port}/stream`;
    await expect(LatchChannelClient.connect(url)).rejects.toThrow(/401/);
    await expect(LatchChannelClient.connect(url, { headers: { authorization: 'Bearer garbage' } })).rejects.toThrow(
      /401/,
    );
    // `token` wins over an Authorization header given in `headers`.
    const c = await LatchChannelClient.connect(url, {
      token: await s.mint(stores.A, ['check:tuples']),
      headers: { authorization: 'Bearer garbage' },
    });
    try {
      const key = { user: 'user:anne', relation: 'viewer', object: 'doc:1' };
      expect(await c.check(stores.A, key)).toBe(true);
      expect(await c.check(stores.A, { ...key, user: 'user:bob' })).toBe(false);
      const refused = await c.check(stores.B, key).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(ChannelError);
      expect({ status: (refused as ChannelError).status, code: (refused as ChannelError).code }).toEqual({
        status: 403,
        code: 'store_mismatch_in_bearer_token',
      });
    } finally {
      await c.close();
    }
    await expect(LatchChannelClient.connect(url, { headers: { 'x-bad\r\nInjected': 'v' } })).rejects.toThrow(
      /invalid header/,
    );
  });

  it('channel calls are in the store log: one record per request, one per check group of a frame', async () => {
    const url = `ws://127.0.0.1:${s.port}/stream`;
    const c = await LatchChannelClient.connect(url, {
      token: await s.mint(stores.A, ['check:tuples', 'write:tuples']),
    });
    const key = { user: 'user:anne', relation: 'viewer', object: 'doc:1' };
    try {
      const frame = await c.batch([
        { op: 'check', store_id: stores.A, body: { tuple_key: key } },
        { op: 'check', store_id: stores.A, body: { tuple_key: { ...key, user: 'user:dora' } } },
        { op: 'check', store_id: stores.A, body: { tuple_key: { ...key, relation: 'owner' } } },
        { op: 'read', store_id: stores.A, body: {} },
        {
          op: 'write',
          store_id: stores.A,
          body: { writes: { tuple_keys: [{ user: 'user:carl', relation: 'viewer', object: 'doc:9' }] } },
        },
      ]);
      expect(frame.map((a) => a.status)).toEqual([200, 200, 400, 403, 200]);
      // A frame of one check: its record carries the tuple key, as an HTTP Check's does.
      expect(
        await c.request('check', stores.A, { tuple_key: { ...key, user: 'user:carl', object: 'doc:9' } }),
      ).toMatchObject({ status: 200, body: { allowed: true } });
      // Interned ids (check-ids): one record for the whole request too.
      const many = await c.checkMany(stores.A, [
        key,
        { ...key, user: 'user:erin' },
        { ...key, relation: 'owner' },
        { ...key, object: 'doc:2' },
      ]);
      expect([...many.errors.keys()]).toEqual([2]);
    } finally {
      await c.close();
    }
    const page = await call(
      s.base,
      'GET',
      `/stores/${stores.A}/logs?sort=timestamp:1`,
      undefined,
      bearer(await s.mint('*', ALL_SCOPES)),
    );
    expect(page.status).toBe(200);
    type Entry = {
      client_id: string;
      request: { operation: string; tuple_key: unknown; tuple_keys: unknown; filter: unknown };
      response: { status: number; error_code: string; latency_ms: number };
    };
    const mine = (page.json!.logs as Entry[]).filter(
      (l) =>
        l.client_id === s.clientId &&
        l.request.operation !== 'CreateStore' &&
        l.request.operation !== 'WriteAuthorizationModel',
    );
    const view = mine.map((l) => ({
      op: l.request.operation,
      key: l.request.tuple_key,
      keys: l.request.tuple_keys,
      filter: l.request.filter,
      status: l.response.status,
      code: l.response.error_code,
    }));
    // Records of one millisecond have no defined order: compare as a set.
    expect(view).toEqual(
      expect.arrayContaining([
        { op: 'Read', key: null, keys: null, filter: null, status: 403, code: 'insufficient_permissions' },
        {
          op: 'Write',
          key: null,
          keys: { writes: [{ user: 'user:carl', relation: 'viewer', object: 'doc:9' }], deletes: [] },
          filter: null,
          status: 200,
          code: '',
        },
        {
          op: 'Check',
          key: null,
          keys: null,
          filter: { checks: '3', failed: '1' },
          status: 400,
          code: 'validation_error',
        },
        {
          op: 'Check',
          key: null,
          keys: null,
          filter: { checks: '4', failed: '1' },
          status: 400,
          code: 'validation_error',
        },
        {
          op: 'Check',
          key: { user: 'user:carl', relation: 'viewer', object: 'doc:9' },
          keys: null,
          filter: null,
          status: 200,
          code: '',
        },
      ]),
    );
    // The frame's three checks and the four of check-ids are one record each, not seven.
    expect(view.filter((v) => /user:dora|user:erin|owner/.test(JSON.stringify(v.key ?? null)))).toEqual([]);
    expect(
      view.filter(
        (v) => v.op === 'Check' && v.filter !== null && ['3', '4'].includes((v.filter as { checks: string }).checks),
      ),
    ).toHaveLength(2);
    for (const l of mine) expect(l.response.latency_ms).toBeGreaterThanOrEqual(0);
  });
});
