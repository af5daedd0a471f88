// Cross-origin requests (src/http/cors.ts): a server in auth mode `none` serves no other origin
// unless `--cors-origin` names it; its own origin (the playground) and requests without an Origin
// are always served; configured origins are echoed with credentials allowed.

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, start } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
const EVIL = 'https://evil.example';
let open: Server;
let configured: Server;

beforeAll(async () => {
  open = await start();
  configured = await start({ corsOrigins: ['https://app.example'] });
});
afterAll(async () => {
  await open.close();
  await configured.close();
});

/** The status of a WebSocket upgrade request to /stream with this Origin. */
function upgradeStatus(port: number, origin: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/stream',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        origin,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

async function storeNames(base: string): Promise<string[]> {
  const r = await call(base, 'GET', '/stores');
  return (r.json as { stores: { name: string }[] }).stores.map((s) => s.name);
}

describe('CORS in auth mode none', () => {
  test("attack: a page on another origin cannot create, list or delete a local server's stores", async () => {
    const created = await call(open.base, 'POST', '/stores', '{"name":"from-evil"}', {
      origin: EVIL,
      'content-type': 'text/plain',
    });
    expect({ status: created.status, code: (created.json as { code?: string }).code }).toEqual({
      status: 403,
      code: 'forbidden',
    });
    expect(created.headers.get('access-control-allow-origin')).toBeNull();
    expect(await storeNames(open.base)).not.toContain('from-evil');

    const own = await call(open.base, 'POST', '/stores', { name: 'victim' });
    const id = (own.json as { id: string }).id;
    const listed = await call(open.base, 'GET', '/stores', undefined, { origin: EVIL });
    expect(listed.status).toBe(403);
    const deleted = await call(open.base, 'DELETE', `/stores/${id}`, undefined, { origin: EVIL });
    expect(deleted.status).toBe(403);
    expect(await storeNames(open.base)).toContain('victim');

    const pre = await fetch(`${open.base}/stores`, {
      method: 'OPTIONS',
      headers: { origin: EVIL, 'access-control-request-method': 'POST' },
    });
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(await upgradeStatus(open.port, EVIL)).toBe(403);
  });

  test("the server's own origin and requests without an Origin are served", async () => {
    const self = await call(open.base, 'GET', '/stores', undefined, { origin: open.base });
    expect(self.status).toBe(200);
    expect((await call(open.base, 'GET', '/stores')).status).toBe(200);
    expect(await upgradeStatus(open.port, open.base)).toBe(101);
  });
});

describe('--cors-origin', () => {
  test('a configured origin is echoed (preflight and request); others are refused', async () => {
    const pre = await fetch(`${configured.base}/stores`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
    expect(pre.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const r = await call(configured.base, 'GET', '/stores', undefined, { origin: 'https://app.example' });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(r.headers.get('access-control-allow-credentials')).toBe('true');
    expect((await call(configured.base, 'GET', '/stores', undefined, { origin: EVIL })).status).toBe(403);
  });
});
