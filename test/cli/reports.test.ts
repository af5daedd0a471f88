// What the command line reports against a real server on 127.0.0.1: the tuples a write with
// `--ignore-duplicates` / `--ignore-missing` actually applied, DSL semantic errors with their
// line and column, `latch --version`, and batch-check adapting to the server's item limit.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startServer, type RunningServer } from '../../src/main.js';
import { latch, type Run } from './helpers.js';

let server: RunningServer;
let dir: string;
let env: Record<string, string>;
let storeId: string;

const json = <T>(r: Run): T => {
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as T;
};

beforeAll(async () => {
  server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  dir = mkdtempSync(join(tmpdir(), 'latch-reports-'));
  env = { LATCH_API_URL: `http://127.0.0.1:${server.port}` };
  storeId = json<{ store: { id: string } }>(
    await latch(['store', 'create', '--name', 'reports', '--model', 'test/fixtures/models/documents.fga'], env),
  ).store.id;
});

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const csv = (ids: number[]): string =>
  `user_type,user_id,user_relation,relation,object_type,object_id\n${ids.map((i) => `user,u${i},,viewer,document,d${i}`).join('\n')}\n`;

describe('writes report what was applied', () => {
  it('tuple import --ignore-duplicates counts only the new tuples, across chunks', async () => {
    const first = join(dir, 'first.csv');
    writeFileSync(first, csv(Array.from({ length: 30 }, (_, i) => i)));
    expect(
      json<{ written: number }>(await latch(['tuple', 'import', '--store-id', storeId, '--file', first], env)).written,
    ).toBe(30);
    // 0..29 exist: of 0..149, 120 are new; chunks of 40 mix old and new tuples.
    const second = join(dir, 'second.csv');
    writeFileSync(second, csv(Array.from({ length: 150 }, (_, i) => i)));
    const r = json<{ written: number; skipped: number }>(
      await latch(
        ['tuple', 'import', '--store-id', storeId, '--file', second, '--ignore-duplicates', '--chunk-size', '40'],
        env,
      ),
    );
    expect([r.written, r.skipped]).toEqual([120, 30]);
  });

  it('tuple write --ignore-duplicates of an existing tuple writes none', async () => {
    const r = json<Record<string, number>>(
      await latch(
        ['tuple', 'write', '--store-id', storeId, '--ignore-duplicates', 'user:u1', 'viewer', 'document:d1'],
        env,
      ),
    );
    expect(r).toEqual({ written: 0, skipped: 1 });
  });

  it('tuple delete --ignore-missing counts only the tuples that existed', async () => {
    const file = join(dir, 'delete.csv');
    writeFileSync(file, csv([1, 2, 3, 1000, 1001]));
    const r = json<Record<string, number>>(
      await latch(['tuple', 'delete', '--store-id', storeId, '--ignore-missing', '--file', file], env),
    );
    expect(r).toEqual({ deleted: 3, skipped: 2 });
    const again = json<Record<string, number>>(
      await latch(
        ['tuple', 'delete', '--store-id', storeId, '--ignore-missing', 'user:u1', 'viewer', 'document:d1'],
        env,
      ),
    );
    expect(again).toEqual({ deleted: 0, skipped: 1 });
  });

  it('the Write reply carries the counts in Latch-* headers and keeps the OpenFGA body', async () => {
    const res = await fetch(`${env.LATCH_API_URL}/stores/${storeId}/write`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        writes: {
          tuple_keys: [
            { user: 'user:u5', relation: 'viewer', object: 'document:d5' },
            { user: 'user:new', relation: 'viewer', object: 'document:d5' },
          ],
          on_duplicate: 'ignore',
        },
        deletes: {
          tuple_keys: [
            { user: 'user:u6', relation: 'viewer', object: 'document:d6' },
            { user: 'user:none', relation: 'viewer', object: 'document:d6' },
          ],
          on_missing: 'ignore',
        },
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{}');
    expect([res.headers.get('latch-tuples-written'), res.headers.get('latch-tuples-deleted')]).toEqual(['1', '1']);
  });
});

describe('DSL semantic errors carry line and column', () => {
  const model =
    'model\n  schema 1.1\n\ntype user\n\ntype document\n  relations\n    define viewer: [user, team#member]\n';

  it('model write names the position of the unknown type', async () => {
    const file = join(dir, 'bad.fga');
    writeFileSync(file, model);
    const r = await latch(['model', 'write', '--store-id', storeId, file], env);
    expect(r.code).toBe(1);
    expect(r.err).toContain("type_not_found: the definition of relation 'viewer' in type 'document' is invalid");
    expect(r.err).toContain("type 'team' not found (line 8, column 27)");
  });

  it('latch test reports the position too', async () => {
    const file = join(dir, 'bad.fga.yaml');
    writeFileSync(
      file,
      `model: |\n${model
        .split('\n')
        .map((l) => `  ${l}`)
        .join(
          '\n',
        )}\ntests:\n  - name: t\n    check:\n      - user: user:a\n        object: document:1\n        assertions:\n          viewer: false\n`,
    );
    const r = await latch(['test', file]);
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain("type 'team' not found (line 8, column 27)");
  });
});

describe('latch --version', () => {
  it('prints the package version', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    let out = '';
    const code = await main(['--version'], {
      out: (t) => void (out += t),
      err: () => undefined,
      env: {},
      errIsTTY: false,
    });
    expect(code).toBe(0);
    expect(out).toBe(`latch ${pkg.version}\n`);
  });
});

describe('batch-check adapts to the server limit', () => {
  it('learns the limit from the refusal and sends every check', async () => {
    const small = await startServer({
      host: '127.0.0.1',
      port: 0,
      datastore: 'memory',
      engine: { maxBatchCheckItems: 7 },
    });
    try {
      const smallEnv = { LATCH_API_URL: `http://127.0.0.1:${small.port}` };
      const store = json<{ store: { id: string } }>(
        await latch(
          ['store', 'create', '--name', 'batches', '--model', 'test/fixtures/models/documents.fga'],
          smallEnv,
        ),
      ).store.id;
      json(await latch(['tuple', 'write', 'user:anne', 'viewer', 'document:d3', '--store-id', store], smallEnv));
      const checks = Array.from({ length: 25 }, (_, i) => ['--check', `user:anne viewer document:d${i}`]).flat();
      const r = json<{ result: Record<string, { allowed?: boolean; request: { object: string } }> }>(
        await latch(['query', 'batch-check', ...checks, '--store-id', store], smallEnv),
      );
      expect(Object.keys(r.result)).toHaveLength(25);
      for (let i = 0; i < 25; i++)
        expect(r.result[String(i + 1)]).toEqual({
          allowed: i === 3,
          request: { user: 'user:anne', relation: 'viewer', object: `document:d${i}` },
        });
    } finally {
      await small.close();
    }
  });
});
