// `latch model impact`, `latch model diff` and `latch test --candidate` on the worked example of
// docs/changing-models.md (test/fixtures/impact/): a real server on 127.0.0.1, the store imported
// from its store file (tuples, and the tests' checks as assertions), the candidate's summary,
// pairs written as CSV and NDJSON, invalid candidates with their DSL position.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { latch } from './helpers.js';

const DIR = 'test/fixtures/impact';
let server: RunningServer;
let dir: string;
let env: Record<string, string>;
let storeId: string;

beforeAll(async () => {
  server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  dir = mkdtempSync(join(tmpdir(), 'latch-impact-cli-'));
  env = { LATCH_API_URL: `http://127.0.0.1:${server.port}` };
  const imported = await latch(['store', 'import', '--file', `${DIR}/store.fga.yaml`], env);
  expect(imported.code).toBe(0);
  storeId = (JSON.parse(imported.out) as { store: { id: string } }).store.id;
});

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('latch model impact', () => {
  it('prints the changes and the summary, writes the pairs as CSV', async () => {
    const csv = join(dir, 'pairs.csv');
    const r = await latch(
      ['model', 'impact', '--store', storeId, '--assertions', '-o', csv, `${DIR}/candidate.fga`],
      env,
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const out = r.out.split('\n');
    expect(out).toContain('+ doc#blocked: [user]');
    expect(out).toContain('~ doc#editor: [user, group#member] or owner → [user] or owner');
    expect(out).toContain('rejected tuples (restriction_removed): 1, e.g. doc:roadmap#editor@group:leads#member');
    expect(out).toContain('assertion doc:roadmap#editor@user:bob expects true: allowed → denied (FAILS)');
    expect(out.find((l) => l.startsWith('doc#editor '))?.split(/\s+/)).toEqual([
      'doc#editor',
      'changed',
      '2',
      '0',
      '1',
      '0',
    ]);
    expect(out.find((l) => l.startsWith('group#member '))?.split(/\s+/)).toEqual([
      'group#member',
      'unchanged',
      '-',
      '-',
      '-',
      '-',
    ]);
    expect(out).toContain(
      'total: 0 gained, 1 lost, 0 undetermined; 1 tuples read differently; 1 of 4 assertions change',
    );
    // bob stays a viewer of the roadmap through the folder: only his editor grant goes.
    expect(readFileSync(csv, 'utf8')).toBe('change,object,relation,user,detail\nlost,doc:roadmap,editor,user:bob,\n');
  });

  it('writes NDJSON lines and exits 1 with --fail-on-change', async () => {
    const file = join(dir, 'pairs.ndjson');
    const r = await latch(
      ['model', 'impact', '--store-id', storeId, '--fail-on-change', '-o', file, `${DIR}/candidate.fga`],
      env,
    );
    expect(r.code).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe(
      `${JSON.stringify({ kind: 'lost', object: 'doc:roadmap', relation: 'editor', user: 'user:bob' })}\n`,
    );
    const same = await latch(['model', 'impact', '--store-id', storeId, '--fail-on-change', `${DIR}/base.fga`], env);
    expect(same.code).toBe(0);
    expect(same.out).toContain('total: 0 gained, 0 lost, 0 undetermined; 0 tuples read differently');
  });

  it('an invalid candidate fails locally with its line and column', async () => {
    const r = await latch(['model', 'impact', '--store-id', storeId, `${DIR}/broken.fga`], env);
    expect(r.code).toBe(1);
    expect(r.err).toContain('(line 9, column 12)');
  });
});

describe('latch model diff', () => {
  it('shows the structural difference of two files', async () => {
    const r = await latch(['model', 'diff', `${DIR}/base.fga`, `${DIR}/candidate.fga`]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        '+ doc#blocked: [user]',
        '~ doc#editor: [user, group#member] or owner',
        '            → [user] or owner',
        '~ doc#viewer: [user, group#member] or editor or viewer from parent',
        '            → ([user, user:*, group#member] or editor or viewer from parent) but not blocked',
        '',
      ].join('\n'),
    );
    const none = await latch(['model', 'diff', `${DIR}/base.fga`, `${DIR}/base.fga`, '--format', 'json']);
    expect(JSON.parse(none.out)).toMatchObject({ typesAdded: [], relationsChanged: [], conditionsChanged: [] });
  });
});

describe('latch test --candidate', () => {
  it("runs the store file's tests under the candidate", async () => {
    const base = await latch(['test', `${DIR}/store.fga.yaml`]);
    expect(base.code).toBe(0);
    const r = await latch(['test', '--candidate', `${DIR}/candidate.fga`, `${DIR}/store.fga.yaml`]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('✗ Check(user=user:bob, relation=editor, object=doc:roadmap): expected true, got false');
    expect(r.out).toContain('FAIL: files 0/1, tests 1/2 passed; checks 3/4');
  });

  it('refuses an existing store', async () => {
    const r = await latch([
      'test',
      '--candidate',
      `${DIR}/candidate.fga`,
      '--api-url',
      env.LATCH_API_URL ?? '',
      '--store-id',
      storeId,
      `${DIR}/store.fga.yaml`,
    ]);
    expect(r.code).toBe(2);
  });
});
