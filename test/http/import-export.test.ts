// Bulk import and export (`POST /stores/{id}/tuples/import`, `GET /stores/{id}/tuples/export`)
// against real servers on memory, LevelDB and PostgreSQL: chunks into an empty and into a live
// store, each one revision with every new tuple once in the changelog; a chunk sent again changes
// nothing; a bad tuple rejects its chunk with its index and code and writes nothing; export →
// import into another store gives the same tuples; a consumer that stops reading the export is
// cut off.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/postgres.js';
import { call, stalledResponse, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;

const withPostgres = hasPostgres();

const key = (t: Pick<TupleKey, 'user' | 'relation' | 'object'>): string => `${t.object}#${t.relation}@${t.user}`;
const viewer = (i: number): TupleKey => ({ user: `user:u${i}`, relation: 'viewer', object: `doc:d${i}` });
const ndjson = (tuples: readonly unknown[]): string => tuples.map((t) => JSON.stringify(t)).join('\n') + '\n';

interface Imported {
  readonly written: number;
  readonly revision: number;
}

async function importChunk(s: Server, store: string, tuples: readonly unknown[]): Promise<Imported> {
  const r = await call(s.base, 'POST', `/stores/${store}/tuples/import`, ndjson(tuples), {
    'content-type': 'application/x-ndjson',
  });
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get('latch-revision')).toBe(String((r.json as Imported).revision));
  return r.json as Imported;
}

/** Every tuple key of the export stream, and its lines. */
async function exported(s: Server, store: string): Promise<TupleKey[]> {
  const r = await call(s.base, 'GET', `/stores/${store}/tuples/export`);
  expect(r.status, r.text).toBe(200);
  return r.text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { result: TupleKey }).result);
}

interface Change {
  readonly tuple_key: TupleKey;
  readonly operation: string;
}

async function changes(s: Server, store: string): Promise<Change[]> {
  const out: Change[] = [];
  let token = '';
  for (;;) {
    const q = token ? `&continuation_token=${encodeURIComponent(token)}` : '';
    const r = await call(s.base, 'GET', `/stores/${store}/changes?page_size=100${q}`);
    expect(r.status, r.text).toBe(200);
    const page = r.json as { changes: Change[]; continuation_token: string };
    if (page.changes.length === 0) return out;
    out.push(...page.changes);
    token = page.continuation_token;
  }
}

async function allowed(s: Server, store: string, user: string, relation: string, object: string): Promise<boolean> {
  const r = await call(s.base, 'POST', `/stores/${store}/check`, { tuple_key: { user, relation, object } });
  expect(r.status, r.text).toBe(200);
  return (r.json as { allowed: boolean }).allowed;
}

/** The same suite on each backend. */
function suite(name: string, open: () => Promise<{ server: Server; close: () => Promise<void> }>): void {
  describe(name, () => {
    let s: Server;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ server: s, close } = await open());
    }, 120_000);
    afterAll(async () => {
      await close?.();
    });

    it('imports into an empty store: one revision per chunk, every tuple once in the changelog, Check sees them', async () => {
      const store = await storeWithModel(s.base, 'import-empty');
      const all = Array.from({ length: 3000 }, (_, i) => viewer(i));
      const revisions: number[] = [];
      for (let i = 0; i < all.length; i += 1000) {
        const r = await importChunk(s, store, all.slice(i, i + 1000));
        expect(r.written).toBe(1000);
        revisions.push(r.revision);
      }
      expect(revisions).toEqual([revisions[0], (revisions[0] ?? 0) + 1, (revisions[0] ?? 0) + 2]);
      const log = await changes(s, store);
      expect(log.map((c) => c.operation)).toEqual(all.map(() => 'TUPLE_OPERATION_WRITE'));
      expect(log.map((c) => key(c.tuple_key))).toEqual(all.map(key));
      expect((await exported(s, store)).map(key).sort()).toEqual(all.map(key).sort());
      expect(await allowed(s, store, 'user:u2999', 'viewer', 'doc:d2999')).toBe(true);
      expect(await allowed(s, store, 'user:u1', 'viewer', 'doc:d2')).toBe(false);
    });

    it('imports into a live store: stored tuples are skipped, a chunk sent again changes nothing', async () => {
      const store = await storeWithModel(s.base, 'import-live');
      const w = await call(s.base, 'POST', `/stores/${store}/write`, {
        writes: { tuple_keys: [viewer(1), viewer(2), { user: 'user:owner', relation: 'owner', object: 'doc:d9' }] },
      });
      expect(w.status, w.text).toBe(200);
      const chunk = [
        viewer(1),
        viewer(2),
        viewer(3),
        viewer(4),
        { user: 'group:eng#member', relation: 'viewer', object: 'doc:d5' },
      ];
      const first = await importChunk(s, store, chunk);
      expect(first.written).toBe(3);
      const again = await importChunk(s, store, chunk);
      expect(again).toEqual({ written: 0, revision: first.revision });
      const log = await changes(s, store);
      expect(log.map((c) => key(c.tuple_key))).toEqual([
        'doc:d1#viewer@user:u1',
        'doc:d2#viewer@user:u2',
        'doc:d9#owner@user:owner',
        'doc:d3#viewer@user:u3',
        'doc:d4#viewer@user:u4',
        'doc:d5#viewer@group:eng#member',
      ]);
      expect(await allowed(s, store, 'user:owner', 'viewer', 'doc:d9')).toBe(true);
      expect(await allowed(s, store, 'user:u4', 'viewer', 'doc:d4')).toBe(true);
    });

    it('a bad tuple rejects its chunk with its index and code; nothing of the chunk is written', async () => {
      const store = await storeWithModel(s.base, 'import-bad');
      const before = await importChunk(s, store, [viewer(0)]);
      const cases: { tuples: unknown[]; code: string; index: number }[] = [
        // an unknown relation: Write's validation_error
        {
          tuples: [viewer(1), viewer(2), { user: 'user:x', relation: 'editor', object: 'doc:d3' }],
          code: 'validation_error',
          index: 2,
        },
        // a malformed object: the parser's validation_error
        {
          tuples: [viewer(1), { user: 'user:x', relation: 'viewer', object: 'no colon' }],
          code: 'validation_error',
          index: 1,
        },
        // the same tuple twice in one chunk
        { tuples: [viewer(1), viewer(2), viewer(1)], code: 'cannot_allow_duplicate_tuples_in_one_request', index: 2 },
        // the parser's checks of a tuple of exactly {user, relation, object}: the user's length,
        // the relation's pattern, the object's, a value that is not a string
        {
          tuples: [viewer(1), { user: `user:${'u'.repeat(508)}`, relation: 'viewer', object: 'doc:d1' }],
          code: 'validation_error',
          index: 1,
        },
        {
          tuples: [viewer(1), viewer(2), { user: 'user:x', relation: 'view:er', object: 'doc:d1' }],
          code: 'validation_error',
          index: 2,
        },
        { tuples: [{ user: 'user:x', relation: 'viewer', object: 'd' }], code: 'validation_error', index: 0 },
        { tuples: [viewer(1), { user: 7, relation: 'viewer', object: 'doc:d1' }], code: 'validation_error', index: 1 },
      ];
      for (const c of cases) {
        const r = await call(s.base, 'POST', `/stores/${store}/tuples/import`, ndjson(c.tuples), {
          'content-type': 'application/x-ndjson',
        });
        expect(r.status, r.text).toBe(400);
        expect(r.json).toMatchObject({ code: c.code, tuple_index: c.index });
      }
      // A tuple stored with another condition: 409, nothing of the chunk written.
      const conflict = await call(s.base, 'POST', `/stores/${store}/tuples/import`, {
        tuple_keys: [viewer(7), { ...viewer(0), condition: { name: 'office' } }],
      });
      expect(conflict.status, conflict.text).toBe(409);
      // A line that is not JSON.
      const broken = await call(
        s.base,
        'POST',
        `/stores/${store}/tuples/import`,
        `${JSON.stringify(viewer(1))}\n{nope\n`,
        {
          'content-type': 'application/x-ndjson',
        },
      );
      expect(broken.status, broken.text).toBe(400);
      expect(broken.json).toMatchObject({ code: 'validation_error', tuple_index: 1 });
      // Two values on one line: refused, though the lines joined into an array would parse.
      const twoOnALine = await call(
        s.base,
        'POST',
        `/stores/${store}/tuples/import`,
        `${JSON.stringify(viewer(1))},${JSON.stringify(viewer(2))}\n`,
        { 'content-type': 'application/x-ndjson' },
      );
      expect(twoOnALine.status, twoOnALine.text).toBe(400);
      expect((twoOnALine.json as { code: string }).code).toBe('validation_error');
      expect((await exported(s, store)).map(key)).toEqual([key(viewer(0))]);
      expect((await changes(s, store)).length).toBe(1);
      const after = await importChunk(s, store, [viewer(0)]);
      expect(after.revision).toBe(before.revision);
    });

    it('a field a tuple key does not have is dropped: stored, logged and exported without it', async () => {
      const store = await storeWithModel(s.base, 'import-extra');
      const sent = [
        viewer(1),
        { ...viewer(2), note: 'not a field of TupleKey' },
        { object: 'doc:d3', user: 'user:u3', relation: 'viewer' },
      ];
      expect((await importChunk(s, store, sent)).written).toBe(3);
      const want = [viewer(1), viewer(2), viewer(3)];
      expect(await exported(s, store)).toEqual(want);
      const logged = (await changes(s, store)).map((c) => c.tuple_key);
      expect(logged.map(key)).toEqual(want.map(key));
      for (const t of logged) expect(Object.keys(t).sort()).toEqual(['condition', 'object', 'relation', 'user']);
    });

    it('export → import into another store gives the same tuples (conditions and expiries included)', async () => {
      const a = await storeWithModel(s.base, 'export-a');
      const expires = new Date(Date.now() + 86_400_000).toISOString();
      const tuples = [
        ...Array.from({ length: 2500 }, (_, i) => viewer(i)),
        {
          user: 'user:c',
          relation: 'viewer',
          object: 'doc:c',
          condition: { name: 'office', context: { ip: '10.0.0.1' } },
        },
        { user: 'user:e', relation: 'viewer', object: 'doc:e', expires_at: expires },
        { user: 'group:eng#member', relation: 'viewer', object: 'doc:g' },
      ];
      await importChunk(s, a, tuples);
      const out = await exported(s, a);
      expect(out.length).toBe(tuples.length);
      const b = await storeWithModel(s.base, 'export-b');
      await importChunk(s, b, out);
      const again = await exported(s, b);
      expect(again).toEqual(out);
      expect(again.find((t) => t.object === 'doc:c')?.condition).toEqual({
        name: 'office',
        context: { ip: '10.0.0.1' },
      });
      expect(again.find((t) => t.object === 'doc:e')?.expires_at).toBe(expires);
    });

    it('unknown store: 404 for both', async () => {
      const missing = '01JAAAAAAAAAAAAAAAAAAAAAAA';
      const r = await call(s.base, 'POST', `/stores/${missing}/tuples/import`, ndjson([viewer(1)]), {
        'content-type': 'application/x-ndjson',
      });
      expect(r.status).toBe(404);
      expect((r.json as { code: string }).code).toBe('store_id_not_found');
      const e = await call(s.base, 'GET', `/stores/${missing}/tuples/export`);
      expect(e.status).toBe(404);
    });
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

suite('memory', async () => {
  const server = await start({ watchStallMs: 300 });
  return { server, close: () => server.close() };
});

suite('leveldb', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'latch-import-'));
  dirs.push(dir);
  const server = await start({ datastore: 'leveldb', dataDir: dir });
  return { server, close: () => server.close() };
});

describe.runIf(withPostgres)('postgres', () => {
  let db: TestDatabase;
  suite('postgres backend', async () => {
    db = await createTestDatabase('latch_import');
    const server = await start({ datastore: 'postgres', postgres: { url: db.url, poolSize: 3, startTimeoutMs: 0 } });
    return {
      server,
      close: async () => {
        await server.close();
        await db.drop();
      },
    };
  });
});

describe('export to a consumer that stops reading', () => {
  let s: Server;
  beforeAll(async () => {
    s = await start({ watchStallMs: 300 });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('is cut off: the stream ends with resource_exhausted long before its end', async () => {
    const store = await storeWithModel(s.base, 'export-slow');
    // ~10 MB of lines: more than the loopback socket buffers hold.
    const long = 'x'.repeat(400);
    for (let i = 0; i < 5; i++)
      await importChunk(
        s,
        store,
        Array.from({ length: 5000 }, (_, k) => ({
          user: `user:${long}${k}`,
          relation: 'viewer',
          object: `doc:${i}_${k}`,
        })),
      );
    const raw = await stalledResponse(s, `GET /stores/${store}/tuples/export HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const lines = raw
      .toString('latin1')
      .split('\n')
      .filter((l) => l.startsWith('{"'));
    const last = JSON.parse(lines[lines.length - 1] ?? '{}') as { error?: { code?: number } };
    expect(last.error?.code).toBe(8); // gRPC RESOURCE_EXHAUSTED
    expect(lines.length - 1).toBeLessThan(25_000);
  }, 180_000);
});
