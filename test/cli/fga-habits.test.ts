// The commands an OpenFGA `fga` user reaches for: `latch changes` (ReadChanges, `--follow` for
// Watch), `latch model validate` and `latch model transform` (offline), `tuple write --expires-at`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { latch } from './helpers.js';

let server: RunningServer;
let env: Record<string, string>;
let dir: string;

const MODEL = 'model\n  schema 1.1\n\ntype user\n\ntype document\n  relations\n    define viewer: [user]\n';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'latch-fga-habits-'));
  writeFileSync(join(dir, 'model.fga'), MODEL);
  server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  env = { LATCH_API_URL: `http://127.0.0.1:${server.port}` };
  const created = await latch(['store', 'create', '--name', 'habits', '--model', join(dir, 'model.fga')], env);
  expect(created.code).toBe(0);
  env.LATCH_STORE_ID = (JSON.parse(created.out) as { store: { id: string } }).store.id;
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ok = (r: { code: number; out: string; err: string }): unknown => {
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out);
};

describe('tuple write --expires-at', () => {
  it('writes the tuple with its expiry, which tuple read shows', async () => {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    ok(await latch(['tuple', 'write', 'user:guest', 'viewer', 'document:a', '--expires-at', at], env));
    const read = (
      ok(await latch(['tuple', 'read', '--object', 'document:a'], env)) as {
        tuples: { key: { expires_at?: string } }[];
      }
    ).tuples;
    expect(read.map((t) => Date.parse(t.key.expires_at ?? ''))).toEqual([Date.parse(at)]);
  });

  it('refuses a value that is not a timestamp (exit 2)', async () => {
    const r = await latch(['tuple', 'write', 'user:guest', 'viewer', 'document:b', '--expires-at', 'tomorrow'], env);
    expect(r.code).toBe(2);
  });
});

describe('latch changes', () => {
  it('prints the change log, and --follow streams a change written after it started', async () => {
    ok(await latch(['tuple', 'write', 'user:anne', 'viewer', 'document:c'], env));
    const log = ok(await latch(['changes', '--type', 'document'], env)) as {
      changes: { tuple_key: { object: string }; operation: string }[];
      continuation_token: string;
    };
    expect(log.changes.map((c) => c.tuple_key.object)).toEqual(['document:a', 'document:c']);
    expect(log.changes.every((c) => c.operation === 'TUPLE_OPERATION_WRITE')).toBe(true);

    const follow = latch(
      [
        'changes',
        '--type',
        'document',
        '--follow',
        '--max-changes',
        '1',
        '--continuation-token',
        log.continuation_token,
      ],
      env,
    );
    ok(await latch(['tuple', 'write', 'user:bob', 'viewer', 'document:d'], env));
    const r = await follow;
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { change: { tuple_key: { object: string } } });
    expect(lines.map((l) => l.change.tuple_key.object)).toEqual(['document:d']);
  });
});

describe('latch model validate and transform (offline)', () => {
  it('validate: is_valid true for a good model; false with the catalog code and exit 1 for a bad one', async () => {
    expect(ok(await latch(['model', 'validate', join(dir, 'model.fga')]))).toEqual({ is_valid: true });
    writeFileSync(join(dir, 'bad.fga'), MODEL.replace('[user]', '[team#member]'));
    const bad = await latch(['model', 'validate', '--file', join(dir, 'bad.fga')]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toMatchObject({ is_valid: false, error: { code: 'type_not_found' } });
  });

  it('transform: DSL → JSON → DSL gives the same model', async () => {
    const json = await latch(['model', 'transform', join(dir, 'model.fga')]);
    expect(ok(json)).toMatchObject({
      schema_version: '1.1',
      type_definitions: [{ type: 'user' }, { type: 'document' }],
    });
    writeFileSync(join(dir, 'model.json'), json.out);
    const dsl = await latch(['model', 'transform', join(dir, 'model.json')]);
    expect(dsl.code).toBe(0);
    expect(dsl.out.trim()).toBe(MODEL.trim());
  });
});
