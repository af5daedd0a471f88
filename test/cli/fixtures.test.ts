// `latch test` on the realistic store files of test/fixtures: all pass (exit 0) on the embedded
// engine and against a real server; the deliberately wrong copy fails with a readable diff and
// exit code 1 (checked both in-process and as a real process).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { latch } from './helpers.js';
import { LATCH_ENTRY } from '../support/latch-process.js';

const FIXTURES = readdirSync('test/fixtures')
  .filter((f) => f.endsWith('.fga.yaml'))
  .map((f) => `test/fixtures/${f}`);
const WRONG = 'test/fixtures/failing/wrong-expectations.fga.yaml';

interface JsonReport {
  passed: boolean;
  summary: Record<string, { total: number; failed: number }>;
  files: {
    file: string;
    passed: boolean;
    tests: {
      name: string;
      passed: boolean;
      checks: { passed: boolean; user: string; relation: string; object: string; expected: boolean; got?: boolean }[];
      listObjects: { passed: boolean; missing: string[]; unexpected: string[] }[];
      listUsers: { passed: boolean; missing: string[]; unexpected: string[] }[];
    }[];
  }[];
}

describe('latch test on the fixtures (embedded engine)', () => {
  it('has at least eight realistic store files', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(8);
  });

  it.each(FIXTURES)('%s passes', async (file) => {
    const r = await latch(['test', file]);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/^PASS: files 1\/1/m);
    expect(r.code).toBe(0);
  });

  it('runs every fixture from one glob and reports the totals as JSON', async () => {
    const r = await latch(['test', 'test/fixtures/*.fga.yaml', '--json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as JsonReport;
    expect(report.passed).toBe(true);
    expect(report.summary.files).toEqual({ total: FIXTURES.length, failed: 0 });
    expect(report.summary.checks?.total).toBeGreaterThan(200);
    expect(report.summary.listObjects?.total).toBeGreaterThan(50);
    expect(report.summary.listUsers?.total).toBeGreaterThan(30);
  });
});

describe('latch test on a deliberately wrong copy', () => {
  it('fails with exit code 1 and says what was expected and what came back', async () => {
    const r = await latch(['test', WRONG]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('✓ still-correct');
    expect(r.out).toContain('✗ wrong-check — checks 1/3');
    expect(r.out).toContain(
      '✗ Check(user=user:carol, relation=editor, object=document:design): expected true, got false',
    );
    expect(r.out).toContain('✗ Check(user=user:bob, relation=viewer, object=folder:root): expected true, got false');
    expect(r.out).toMatch(
      /✗ ListObjects\(user=user:bob, relation=viewer, type=document\): expected \[document:budget, document:design\], got \[document:design, document:readme\]\n\s+missing:\s+document:budget\n\s+unexpected:\s+document:readme/,
    );
    expect(r.out).toMatch(
      /✗ ListUsers\(object=document:design, relation=can_delete, .*\): expected \[user:alice, user:dave\], got \[user:dave\]\n\s+missing:\s+user:alice/,
    );
    expect(r.out).toMatch(/^FAIL: files 0\/1, tests 1\/3 passed; checks 2\/4, list_objects 0\/1, list_users 0\/1$/m);
  });

  it('reports the same failures as JSON', async () => {
    const r = await latch(['test', WRONG, '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as JsonReport;
    expect(report.passed).toBe(false);
    const failedChecks = report.files[0]?.tests.flatMap((t) => t.checks.filter((c) => !c.passed)) ?? [];
    expect(failedChecks.map((c) => `${c.user} ${c.relation} ${c.object} ${c.expected}→${c.got}`)).toEqual([
      'user:carol editor document:design true→false',
      'user:bob viewer folder:root true→false',
    ]);
  });

  it('accepts --tests as `fga model test` does', async () => {
    const r = await latch(['test', '--tests', WRONG, '--tests', 'test/fixtures/blocklist.fga.yaml']);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^FAIL: files 1\/2/m);
  });

  it('a fixture that cannot be loaded fails too', async () => {
    const r = await latch(['test', 'test/fixtures/no-such-file.fga.yaml']);
    expect(r.code).toBe(1);
    expect(r.out).toContain('no such file');
  });

  it('exits 1 as a real process, and 0 on a passing file', () => {
    const run = (file: string) => spawnSync(process.execPath, [...LATCH_ENTRY, 'test', file], { encoding: 'utf8' });
    const bad = run(WRONG);
    expect(bad.stdout).toContain('FAIL:');
    expect(bad.status).toBe(1);
    const good = run('test/fixtures/blocklist.fga.yaml');
    expect(good.stdout).toContain('PASS:');
    expect(good.status).toBe(0);
  });
});

describe('latch test reports errors as failures, with the reason', () => {
  const model =
    'model: |\n  model\n    schema 1.1\n  type user\n  type doc\n    relations\n      define viewer: [user with in_office]\n  condition in_office(ip: ipaddress) {\n    ip.in_cidr("10.0.0.0/8")\n  }\n';
  const run = async (body: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'latch-test-errors-'));
    try {
      const file = join(dir, 'errors.fga.yaml');
      writeFileSync(file, `name: errors\n${model}${body}`);
      return await latch(['test', file]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('a query error (missing condition parameter) fails that assertion and shows the error', async () => {
    const r = await run(
      'tuples:\n  - {user: "user:anne", relation: viewer, object: "doc:1", condition: {name: in_office}}\ntests:\n  - name: t\n    check:\n      - {user: "user:anne", object: "doc:1", context: {ip: "10.1.1.1"}, assertions: {viewer: true}}\n      - {user: "user:anne", object: "doc:1", assertions: {viewer: true}}\n',
    );
    expect(r.code).toBe(1);
    expect(r.out).toContain('checks 1/2');
    expect(r.out).toMatch(
      /✗ Check\(user=user:anne, relation=viewer, object=doc:1\): expected true, error: validation_error: .*in_office/,
    );
  });

  it('a tuple the model rejects fails the test before any query runs', async () => {
    const r = await run(
      'tests:\n  - name: t\n    tuples:\n      - {user: "user:anne", relation: editor, object: "doc:1"}\n    check:\n      - {user: "user:anne", object: "doc:1", assertions: {viewer: false}}\n',
    );
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/✗ t\n\s+error: cannot prepare the store: validation_error/);
    expect(r.out).toContain('checks 0/0');
  });
});

describe('latch test --api-url against a real server', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('passes every fixture and leaves no scratch store behind', async () => {
    const url = `http://127.0.0.1:${server.port}`;
    const r = await latch(['test', ...FIXTURES, '--api-url', url]);
    expect(r.out).toMatch(/^PASS: /m);
    expect(r.code).toBe(0);
    const stores = (await (await fetch(`${url}/stores`)).json()) as { stores: unknown[] };
    expect(stores.stores).toEqual([]);
  });

  it("runs on an existing store with --store-id: its model and data, the file's tuples as contextual tuples", async () => {
    const url = `http://127.0.0.1:${server.port}`;
    const imported = await latch(['store', 'import', '--file', 'test/fixtures/blocklist.fga.yaml', '--api-url', url]);
    const storeId = (JSON.parse(imported.out) as { store: { id: string } }).store.id;
    // A model-less file: its tests rely on the store's tuples plus one contextual tuple of its own.
    const dir = mkdtempSync(join(tmpdir(), 'latch-existing-'));
    try {
      const file = join(dir, 'remote.fga.yaml');
      writeFileSync(
        file,
        'name: remote\ntests:\n  - name: t\n    tuples:\n      - {user: "user:zed", relation: muted, object: "channel:general"}\n    check:\n      - {user: "user:sue", object: "channel:general", assertions: {can_post: true}}\n      - {user: "user:zed", object: "channel:general", assertions: {can_read: true, muted: true}}\n    list_objects:\n      - {user: "user:cole", type: channel, assertions: {can_post: ["channel:eng"]}}\n    list_users:\n      - {object: "channel:general", user_filter: [{type: user}], assertions: {muted: {users: ["user:sam", "user:zed"]}}}\n',
      );
      const r = await latch(['test', file, '--api-url', url, '--store-id', storeId]);
      expect(r.out).toMatch(/^PASS: files 1\/1, tests 1\/1 passed; checks 3\/3, list_objects 1\/1, list_users 1\/1$/m);
      expect(r.code).toBe(0);
      const stores = (await (await fetch(`${url}/stores`)).json()) as { stores: { id: string }[] };
      expect(stores.stores.map((s) => s.id)).toEqual([storeId]); // no scratch store, nothing deleted
      const tuples = (await (
        await fetch(`${url}/stores/${storeId}/read`, {
          method: 'POST',
          body: JSON.stringify({ tuple_key: { object: 'channel:general', relation: 'muted' } }),
        })
      ).json()) as { tuples: unknown[] };
      expect(tuples.tuples).toHaveLength(1); // the contextual tuple was not written
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await latch(['store', 'delete', '--store-id', storeId, '--api-url', url]);
    }
  });

  it('--store-id without --api-url is a usage error', async () => {
    const r = await latch(['test', WRONG, '--store-id', '01J5Y0M8Q3ZKX7T9B2C4D6F8GH']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--store-id needs --api-url');
  });

  it('fails the wrong copy the same way', async () => {
    const r = await latch(['test', WRONG, '--api-url', `http://127.0.0.1:${server.port}`]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^FAIL: files 0\/1, tests 1\/3 passed; checks 2\/4, list_objects 0\/1, list_users 0\/1$/m);
  });
});
