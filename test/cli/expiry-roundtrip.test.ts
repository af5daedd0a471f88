// `expires_at` through store files: `store export` writes it, `store import` writes it back
// unchanged (both servers on an injected clock); CSV tuple files carry it in their own column; a
// file whose tuples have expired meanwhile is refused by the server (400), never imported as
// permanent grants.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FgaHttpClient } from '../../src/cli/http-client.js';
import { parseCsvTuples, toCsv } from '../../src/cli/tuple-file.js';
import { startServer, type RunningServer } from '../../src/main.js';
import { latch } from './helpers.js';

const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const EXPIRES = '2026-06-02T00:00:00.000Z';
let now = T0;
let source: RunningServer;
let fresh: RunningServer;
let dir: string;
const url = (s: RunningServer) => `http://127.0.0.1:${s.port}`;

beforeAll(async () => {
  source = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory', clock: () => now, expirySweepMs: 0 });
  fresh = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory', clock: () => now, expirySweepMs: 0 });
  dir = mkdtempSync(join(tmpdir(), 'latch-expiry-'));
});

afterAll(async () => {
  await source?.close();
  await fresh?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const tuples = async (server: RunningServer, storeId: string): Promise<string[]> =>
  (await new FgaHttpClient({ apiUrl: url(server) }).readAll(storeId)).map((t) => JSON.stringify(t.key)).sort();

describe('expires_at in store files', () => {
  it('export → import keeps every expires_at; an expired file is refused', async () => {
    const created = await latch([
      'store',
      'import',
      '--file',
      'test/fixtures/conditions.fga.yaml',
      '--api-url',
      url(source),
    ]);
    expect(created.code, created.err).toBe(0);
    const storeId = (JSON.parse(created.out) as { store: { id: string } }).store.id;
    const client = new FgaHttpClient({ apiUrl: url(source) });
    const existing = (await client.readAll(storeId))[0]?.key;
    if (!existing) throw new Error('fixture has no tuples');
    await client.write(storeId, {
      writes: {
        tuple_keys: [
          {
            user: 'user:temp',
            relation: existing.relation,
            object: existing.object,
            ...(existing.condition ? { condition: existing.condition } : {}),
            expires_at: EXPIRES,
          },
        ],
      },
    });
    const file = join(dir, 'exported.fga.yaml');
    expect(
      (await latch(['store', 'export', '--store-id', storeId, '-o', file], { LATCH_API_URL: url(source) })).code,
    ).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain(`expires_at: "${EXPIRES}"`);
    const imported = await latch(['store', 'import', '--file', file, '--api-url', url(fresh)]);
    expect(imported.code, imported.err).toBe(0);
    const copy = (JSON.parse(imported.out) as { store: { id: string } }).store.id;
    const before = await tuples(source, storeId);
    expect(before.filter((t) => t.includes(EXPIRES))).toHaveLength(1);
    expect(await tuples(fresh, copy)).toEqual(before);

    now = Date.parse(EXPIRES);
    const late = await latch(['store', 'import', '--file', file, '--api-url', url(fresh)]);
    expect(late.code).not.toBe(0);
    expect(late.err).toContain('expires_at');
  });

  it('CSV: the expires_at column only when a tuple expires, read back as written', () => {
    const plain = [{ user: 'user:a', relation: 'viewer', object: 'doc:1' }];
    expect(toCsv(plain).split('\n')[0]).toBe(
      'user_type,user_id,user_relation,relation,object_type,object_id,condition_name,condition_context',
    );
    const mixed = [...plain, { user: 'team:x#member', relation: 'viewer', object: 'doc:2', expires_at: EXPIRES }];
    const text = toCsv(mixed);
    expect(text.split('\n')[0]?.endsWith(',expires_at')).toBe(true);
    expect(parseCsvTuples(text)).toEqual(mixed);
  });
});
