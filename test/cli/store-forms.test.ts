// Every store-file form the `fga` command line accepts, from the fixtures in test/fixtures/forms/:
// files and tests without names, `tuple_file` and `tuple_files` at both levels, a modular model
// from `fga.mod` with a module in a subfolder, and `context` plus `contextual_tuples` on check,
// list_objects and list_users. Each assertion there holds only if its form was honoured.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStoreFile } from '../../src/cli/store-file.js';
import { startServer, type RunningServer } from '../../src/main.js';
import { latch } from './helpers.js';

const UNNAMED = 'test/fixtures/forms/unnamed.fga.yaml';
const FILES = 'test/fixtures/forms/files.fga.yaml';

const SUMMARY = /^PASS: files 2\/2, tests 5\/5 passed; checks 10\/10, list_objects 5\/5, list_users 3\/3$/m;

describe('store file forms', () => {
  it('a file and tests without names: named after the file and their place', async () => {
    const file = await loadStoreFile(UNNAMED);
    expect(file.name).toBe('unnamed');
    expect(file.tests.map((t) => t.name)).toEqual(['tests[0]', 'tests[1]']);
    expect(file.tests[1]?.description).toBe('a second test without a name');
  });

  it('contextual tuples and context are read on every query kind', async () => {
    const [first, second] = (await loadStoreFile(UNNAMED)).tests;
    expect(first?.check[0]?.contextualTuples).toEqual([
      { user: 'user:bob', relation: 'member', object: 'team:writers' },
      { user: 'team:writers#member', relation: 'viewer', object: 'document:plan' },
    ]);
    expect(first?.check[1]?.context).toEqual({ hour: 10 });
    expect(first?.listObjects[0]?.contextualTuples).toEqual([
      { user: 'user:bob', relation: 'owner', object: 'document:memo' },
    ]);
    expect(second?.listUsers[0]).toMatchObject({
      context: { hour: 12 },
      contextualTuples: [{ user: 'user:dora', relation: 'viewer', object: 'document:plan' }],
    });
  });

  it("a test's tuple_files add to its tuples; global tuple_file and tuple_files to every test", async () => {
    const file = await loadStoreFile(FILES);
    expect(file.tuples.map((t) => `${t.user} ${t.relation} ${t.object}`)).toEqual([
      'user:ada admin organization:acme',
      'user:max member organization:acme',
      'organization:acme org invoice:i1',
      'organization:acme org invoice:i2',
    ]);
    expect(file.tests[2]?.tuples.map((t) => t.user)).toEqual(['user:bea', 'user:cy']);
    expect(file.model?.schema_version).toBe('1.2');
  });

  it('contextual_tuples also take the API shape {tuple_keys: [...]}, and a bad one names its place', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latch-forms-'));
    try {
      const base =
        'model: |\n  model\n    schema 1.1\n  type user\n  type doc\n    relations\n      define viewer: [user]\ntests:\n  - check:\n      - user: user:a\n        object: doc:1\n        assertions: {viewer: true}\n';
      const good = join(dir, 'good.fga.yaml');
      writeFileSync(
        good,
        `${base}        contextual_tuples:\n          tuple_keys: [{user: "user:a", relation: viewer, object: "doc:1"}]\n`,
      );
      expect((await latch(['test', good])).out).toMatch(/^PASS: files 1\/1, tests 1\/1 passed; checks 1\/1/m);
      const bad = join(dir, 'bad.fga.yaml');
      writeFileSync(bad, `${base}        contextual_tuples: [{user: "user:a", object: "doc:1"}]\n`);
      const r = await latch(['test', bad]);
      expect(r.code).toBe(1);
      expect(r.out).toContain("tests[0].check[0].contextual_tuples[0]: 'relation' must be a non-empty string");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every form passes on the embedded engine', async () => {
    const r = await latch(['test', UNNAMED, FILES]);
    expect(r.err).toBe('');
    expect(r.out).toMatch(SUMMARY);
    expect(r.code).toBe(0);
  });
});

describe('store file forms against a real server', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('every form passes over HTTP too', async () => {
    const r = await latch(['test', UNNAMED, FILES, '--api-url', `http://127.0.0.1:${server.port}`]);
    expect(r.err).toBe('');
    expect(r.out).toMatch(SUMMARY);
    expect(r.code).toBe(0);
  });

  it('store import takes a file without a name', async () => {
    const url = `http://127.0.0.1:${server.port}`;
    const r = await latch(['store', 'import', '--file', UNNAMED, '--api-url', url]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { store: { id: string; name: string } };
    expect(out.store.name).toBe('unnamed');
    await latch(['store', 'delete', '--store-id', out.store.id, '--api-url', url]);
  });
});
