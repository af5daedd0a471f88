// The client commands against a real server on 127.0.0.1: stores, models, tuples (single, file,
// chunked import, read in every format) and every query subcommand.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { parseCsvTuples } from '../../src/cli/tuple-file.js';
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
  dir = mkdtempSync(join(tmpdir(), 'latch-client-'));
  env = { LATCH_API_URL: `http://127.0.0.1:${server.port}` };
});

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('store and model commands', () => {
  it('store create with a model, list, get', async () => {
    const created = json<{ store: { id: string; name: string }; model: { authorization_model_id: string } }>(
      await latch(['store', 'create', '--name', 'docs', '--model', 'test/fixtures/models/documents.fga'], env),
    );
    storeId = created.store.id;
    expect(created.store.name).toBe('docs');
    expect(created.model.authorization_model_id).toMatch(/^[0-9A-Z]{26}$/);
    const listed = json<{ stores: { id: string }[] }>(await latch(['store', 'list'], env));
    expect(listed.stores.map((s) => s.id)).toContain(storeId);
    expect(json<{ name: string }>(await latch(['store', 'get', '--store-id', storeId], env)).name).toBe('docs');
  });

  it('model write (DSL, JSON), list newest first, get as DSL and JSON', async () => {
    const dsl = json<{ authorization_model_id: string }>(
      await latch(['model', 'write', '--store-id', storeId, 'test/fixtures/models/documents.fga'], env),
    );
    const inline =
      'model\n  schema 1.1\ntype user\ntype document\n  relations\n    define parent: [folder]\n    define owner: [user]\n    define editor: [user] or owner or editor from parent\n    define viewer: [user] or editor or viewer from parent\n    define can_share: owner or editor from parent\n    define can_delete: owner\ntype folder\n  relations\n    define parent: [folder]\n    define owner: [user]\n    define editor: [user] or owner or editor from parent\n    define viewer: [user] or editor or viewer from parent\n';
    const second = json<{ authorization_model_id: string }>(
      await latch(['model', 'write', '--store-id', storeId, '--inline', inline], env),
    );
    const models = json<{ authorization_models: { id: string }[] }>(
      await latch(['model', 'list', '--store-id', storeId], env),
    );
    expect(models.authorization_models.map((m) => m.id).slice(0, 2)).toEqual([
      second.authorization_model_id,
      dsl.authorization_model_id,
    ]);
    const asJson = json<{ authorization_model: { id: string; type_definitions: { type: string }[] } }>(
      await latch(
        ['model', 'get', '--store-id', storeId, '--model-id', dsl.authorization_model_id, '--format', 'json'],
        env,
      ),
    );
    expect(asJson.authorization_model.type_definitions.map((t) => t.type)).toEqual(['user', 'folder', 'document']);
    const asDsl = await latch(['model', 'get', '--store-id', storeId], env);
    expect(asDsl.code).toBe(0);
    expect(asDsl.out).toContain(`# model ${second.authorization_model_id}`);
    expect(asDsl.out).toContain('define can_share: owner or editor from parent');
  });
});

describe('tuple commands', () => {
  it('writes one tuple, a CSV file, reads them back in json, yaml and csv, deletes', async () => {
    const one = await latch(['tuple', 'write', '--store-id', storeId, 'user:zoe', 'viewer', 'document:notes'], env);
    expect(json<{ written: number }>(one).written).toBe(1);
    const file = await latch(
      ['tuple', 'write', '--store-id', storeId, '--file', 'test/fixtures/data/documents.csv'],
      env,
    );
    expect(json<{ written: number }>(file).written).toBe(10);
    const read = json<{ tuples: { key: { user: string } }[] }>(
      await latch(['tuple', 'read', '--store-id', storeId, '--object', 'document:notes'], env),
    );
    expect(read.tuples.map((t) => t.key.user)).toEqual(['user:zoe']);
    const csv = await latch(['tuple', 'read', '--store-id', storeId, '--output-format', 'csv'], env);
    expect(parseCsvTuples(csv.out)).toHaveLength(11);
    const yaml = await latch(
      [
        'tuple',
        'read',
        '--store-id',
        storeId,
        '--output-format',
        'yaml',
        '--user',
        'user:zoe',
        '--object',
        'document:',
      ],
      env,
    );
    expect(yaml.out).toBe('- user: user:zoe\n  relation: viewer\n  object: document:notes\n');
    const del = await latch(['tuple', 'delete', '--store-id', storeId, 'user:zoe', 'viewer', 'document:notes'], env);
    expect(json<{ deleted: number }>(del).deleted).toBe(1);
    const again = await latch(['tuple', 'delete', '--store-id', storeId, 'user:zoe', 'viewer', 'document:notes'], env);
    expect(again.code).toBe(1);
    expect(again.err).toContain('400 write_failed_due_to_invalid_input');
    expect(
      (
        await latch(
          ['tuple', 'delete', '--store-id', storeId, '--ignore-missing', 'user:zoe', 'viewer', 'document:notes'],
          env,
        )
      ).code,
    ).toBe(0);
  });

  it('imports 250 tuples from a CSV file in chunks of at most 100', async () => {
    const rows = ['user_type,user_id,relation,object_type,object_id'];
    for (let i = 0; i < 250; i++) rows.push(`user,u${i},viewer,document,bulk-${i % 7}`);
    const path = join(dir, 'bulk.csv');
    writeFileSync(path, rows.join('\n') + '\n');
    const r = json<{ written: number }>(
      await latch(['tuple', 'import', '--store-id', storeId, '--file', path, '--chunk-size', '100'], env),
    );
    expect(r.written).toBe(250);
    const read = json<{ tuples: unknown[] }>(
      await latch(['tuple', 'read', '--store-id', storeId, '--relation', 'viewer', '--object', 'document:bulk-3'], env),
    );
    expect(read.tuples).toHaveLength(36); // i ≡ 3 (mod 7) for i < 250
  });

  it('tuple delete --filter: a dry run, then bounded requests until nothing matches', async () => {
    const dry = json<{ would_delete: { object: string }[]; more: boolean }>(
      await latch(
        ['tuple', 'delete', '--store-id', storeId, '--filter', 'object=document:bulk-3,relation=viewer', '--dry-run'],
        env,
      ),
    );
    expect(dry.would_delete).toHaveLength(36);
    expect(dry.more).toBe(false);
    expect(new Set(dry.would_delete.map((k) => k.object))).toEqual(new Set(['document:bulk-3']));
    const all = json<{ would_delete: unknown[]; more: boolean }>(
      await latch(
        [
          'tuple',
          'delete',
          '--store-id',
          storeId,
          '--filter',
          'object_type=document',
          '--filter',
          'relation=viewer',
          '--dry-run',
        ],
        env,
      ),
    );
    expect(all.more).toBe(false);
    const n = all.would_delete.length;
    expect(n).toBeGreaterThanOrEqual(250);
    const done = json<{ deleted: number; requests: number }>(
      await latch(
        [
          'tuple',
          'delete',
          '--store-id',
          storeId,
          '--filter',
          'object_type=document,relation=viewer',
          '--limit',
          '100',
        ],
        env,
      ),
    );
    expect(done).toEqual({ deleted: n, requests: Math.ceil(n / 100) });
    const after = json<{ would_delete: unknown[] }>(
      await latch(
        ['tuple', 'delete', '--store-id', storeId, '--filter', 'object_type=document,relation=viewer', '--dry-run'],
        env,
      ),
    );
    expect(after.would_delete).toEqual([]);
    const bad = await latch(['tuple', 'delete', '--store-id', storeId, '--filter', 'colour=red'], env);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      "--filter takes key=value with key one of object_type, object, relation, user; got 'colour=red'",
    );
  });
});

describe('query commands', () => {
  const q = (...a: string[]) => latch(['query', ...a, '--store-id', storeId], env);

  it('check, with a contextual tuple', async () => {
    expect(json<{ allowed: boolean }>(await q('check', 'user:bob', 'editor', 'document:design')).allowed).toBe(true);
    expect(json<{ allowed: boolean }>(await q('check', 'user:erin', 'editor', 'document:design')).allowed).toBe(false);
    const ctx = await q(
      'check',
      'user:erin',
      'editor',
      'document:design',
      '--contextual-tuple',
      'user:erin editor folder:specs',
    );
    expect(json<{ allowed: boolean }>(ctx).allowed).toBe(true);
    const batch = json<{ result: Record<string, { allowed?: boolean }> }>(
      await q(
        'batch-check',
        '--check',
        'user:erin editor document:design',
        '--contextual-tuple',
        'user:erin editor folder:specs',
        '--consistency',
        'HIGHER_CONSISTENCY',
      ),
    );
    expect(batch.result['1']?.allowed).toBe(true);
    const rels = json<{ relations: string[] }>(
      await q(
        'list-relations',
        'user:erin',
        'document:design',
        '--relation',
        'editor',
        '--relation',
        'can_delete',
        '--contextual-tuple',
        'user:erin editor folder:specs',
      ),
    );
    expect(rels.relations).toEqual(['editor']);
  });

  it('batch-check keeps the correlation of each check', async () => {
    const r = json<{ result: Record<string, { allowed?: boolean; request: { user: string } }> }>(
      await q(
        'batch-check',
        '--check',
        'user:alice viewer document:design',
        '--check',
        'user:erin viewer document:design',
      ),
    );
    expect(r.result['1']).toMatchObject({ allowed: true, request: { user: 'user:alice' } });
    expect(r.result['2']).toMatchObject({ allowed: false, request: { user: 'user:erin' } });
  });

  it('batch-check sends --batch-size checks per request, and adapts to a server limit below 50', async () => {
    const small = await startServer({
      host: '127.0.0.1',
      port: 0,
      datastore: 'memory',
      engine: { maxBatchCheckItems: 10 },
    });
    try {
      const smallEnv = { LATCH_API_URL: `http://127.0.0.1:${small.port}` };
      const store = json<{ store: { id: string } }>(
        await latch(
          ['store', 'create', '--name', 'small-batches', '--model', 'test/fixtures/models/documents.fga'],
          smallEnv,
        ),
      ).store.id;
      json(await latch(['tuple', 'write', 'user:anne', 'viewer', 'document:d3', '--store-id', store], smallEnv));
      const checks = Array.from({ length: 25 }, (_, i) => ['--check', `user:anne viewer document:d${i}`]).flat();
      const r = json<{ result: Record<string, { allowed?: boolean; request: { object: string } }> }>(
        await latch(['query', 'batch-check', ...checks, '--batch-size', '10', '--store-id', store], smallEnv),
      );
      expect(Object.keys(r.result)).toHaveLength(25);
      for (let i = 0; i < 25; i++)
        expect(r.result[String(i + 1)]).toMatchObject({ allowed: i === 3, request: { object: `document:d${i}` } });
      // The default, 50 per request, sends all 25 at once, over this server's limit: the refusal
      // names the limit and the command continues with chunks of that size.
      const adapted = json<{ result: Record<string, { allowed?: boolean }> }>(
        await latch(['query', 'batch-check', ...checks, '--store-id', store], smallEnv),
      );
      for (let i = 0; i < 25; i++) expect(adapted.result[String(i + 1)]?.allowed).toBe(i === 3);
    } finally {
      await small.close();
    }
  });

  it('list-objects, list-users, list-relations, expand', async () => {
    expect(
      json<{ objects: string[] }>(await q('list-objects', 'user:carol', 'viewer', 'document')).objects.sort(),
    ).toEqual(['document:design']);
    const users = json<{ users: unknown[] }>(
      await q('list-users', '--object', 'document:design', '--relation', 'editor', '--user-filter', 'user'),
    );
    expect(users.users).toEqual(
      expect.arrayContaining([
        { object: { type: 'user', id: 'dave' } },
        { object: { type: 'user', id: 'bob' } },
        { object: { type: 'user', id: 'alice' } },
      ]),
    );
    expect(users.users).toHaveLength(3);
    const withCtx = json<{ users: unknown[] }>(
      await q(
        'list-users',
        '--object',
        'document:design',
        '--relation',
        'can_delete',
        '--user-filter',
        'user',
        '--contextual-tuple',
        'user:zed owner document:design',
      ),
    );
    expect(withCtx.users).toHaveLength(2);
    const rel = json<{ relations: string[] }>(await q('list-relations', 'user:dave', 'document:design'));
    expect(rel.relations.sort()).toEqual(['can_delete', 'can_share', 'editor', 'owner', 'viewer']);
    const tree = json<{ tree: { root: { name: string } } }>(await q('expand', 'viewer', 'document:design'));
    expect(tree.tree.root.name).toBe('document:design#viewer');
  });

  it('an API error is exit 1 with the server message', async () => {
    const r = await q('check', 'user:bob', 'no_such_relation', 'document:design');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/latch query check: 400 validation_error: .*no_such_relation/);
  });
});

describe('store import and delete', () => {
  it('imports a store file (model + tuples) and deletes the store', async () => {
    const r = json<{ store: { id: string }; tuples_written: number }>(
      await latch(['store', 'import', '--file', 'test/fixtures/github.fga.yaml'], env),
    );
    expect(r.tuples_written).toBe(13);
    const check = await latch(['query', 'check', '--store-id', r.store.id, 'user:ben', 'admin', 'repo:acme-api'], env);
    expect(json<{ allowed: boolean }>(check).allowed).toBe(true);
    expect((await latch(['store', 'delete', '--store-id', r.store.id], env)).code).toBe(0);
    const gone = await latch(['store', 'get', '--store-id', r.store.id], env);
    expect(gone.code).toBe(1);
    expect(gone.err).toContain('404 store_id_not_found');
  });

  it('a server that is not there is exit 1 with a clear message', async () => {
    const r = await latch(['store', 'list', '--api-url', 'http://127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('cannot reach http://127.0.0.1:1');
  });
});
