// `latch tuple import` and `latch tuple export` against a real server on 127.0.0.1 (LevelDB): an
// import killed mid-way (SIGKILL of the `latch` process) resumes from its state file and leaves
// the store exact (every tuple once, the changelog one write per tuple, no duplicate); CSV and
// NDJSON round trips through export; a state file for another store is refused.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { startServer, type RunningServer } from '../../src/main.js';
import { LATCH_ENTRY } from '../support/latch-process.js';
import { latch, type Run } from './helpers.js';

let server: RunningServer;
let dir: string;
let env: Record<string, string>;

const json = <T>(r: Run): T => {
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as T;
};

async function newStore(name: string): Promise<string> {
  return json<{ store: { id: string } }>(
    await latch(['store', 'create', '--name', name, '--model', 'test/fixtures/models/documents.fga'], env),
  ).store.id;
}

const tuple = (i: number): TupleKey => ({ user: `user:u${i}`, relation: 'viewer', object: `document:d${i}` });
const key = (t: TupleKey): string => `${t.object}#${t.relation}@${t.user}`;

/** Every change of the store, from the server's ReadChanges. */
async function changeKeys(storeId: string): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  for (;;) {
    const q = token ? `&continuation_token=${encodeURIComponent(token)}` : '';
    const r = await fetch(`${env.LATCH_API_URL}/stores/${storeId}/changes?page_size=100${q}`);
    const page = (await r.json()) as {
      changes: { tuple_key: TupleKey; operation: string }[];
      continuation_token: string;
    };
    if (page.changes.length === 0) return out;
    for (const c of page.changes) {
      expect(c.operation).toBe('TUPLE_OPERATION_WRITE');
      out.push(key(c.tuple_key));
    }
    token = page.continuation_token;
  }
}

async function exportKeys(storeId: string): Promise<string[]> {
  const r = await latch(['tuple', 'export', '--store-id', storeId], env);
  expect(r.code, r.err).toBe(0);
  return r.out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => key(JSON.parse(l) as TupleKey));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'latch-cli-import-'));
  server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'leveldb', dataDir: join(dir, 'data') });
  env = { LATCH_API_URL: `http://127.0.0.1:${server.port}` };
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('tuple import', () => {
  it('killed mid-way, resumes after the last acknowledged chunk; the store ends exact', async () => {
    const storeId = await newStore('import-resume');
    const all = Array.from({ length: 30_000 }, (_, i) => tuple(i));
    const file = join(dir, 'resume.ndjson');
    writeFileSync(file, all.map((t) => JSON.stringify(t)).join('\n') + '\n');
    const state = `${file}.import-state`;
    const child = spawn(
      process.execPath,
      [...LATCH_ENTRY, 'tuple', 'import', '--store-id', storeId, file, '--chunk-size', '500'],
      { env: { ...process.env, ...env }, stdio: 'ignore' },
    );
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    // Killed once it has recorded a few acknowledged chunks (of 60).
    await vi.waitFor(
      () => {
        expect(existsSync(state)).toBe(true);
        expect((JSON.parse(readFileSync(state, 'utf8')) as { chunks_done: number }).chunks_done).toBeGreaterThanOrEqual(
          3,
        );
      },
      { timeout: 120_000, interval: 5 },
    );
    child.kill('SIGKILL');
    await exited;
    const recorded = JSON.parse(readFileSync(state, 'utf8')) as { chunks_done: number; store_id: string };
    expect(recorded.store_id).toBe(storeId);
    expect(recorded.chunks_done).toBeLessThan(60);

    const r = json<{ written: number; skipped?: number; resumed_after: number; sent: number }>(
      await latch(['tuple', 'import', '--store-id', storeId, file, '--chunk-size', '500'], env),
    );
    expect(r.resumed_after).toBeGreaterThanOrEqual(recorded.chunks_done);
    expect(r.sent).toBe(30_000 - r.resumed_after * 500);
    expect(existsSync(state)).toBe(false);
    const want = all.map(key);
    expect((await exportKeys(storeId)).sort()).toEqual([...want].sort());
    // One write change per tuple: a chunk the killed run sent (or half-sent) and the resumed run
    // sent again added nothing. Two chunks in flight may commit in either order, so the changes
    // are compared as a sorted list (equal lengths: each tuple exactly once).
    const changes = await changeKeys(storeId);
    expect(changes.length).toBe(want.length);
    expect([...changes].sort()).toEqual([...want].sort());
  }, 240_000);

  it('--in-flight 1 commits in file order; a line that is not JSON rejects its chunk, the run resumes', async () => {
    const storeId = await newStore('import-bad-line');
    const all = Array.from({ length: 1_500 }, (_, i) => tuple(i));
    const lines = all.map((t) => JSON.stringify(t));
    const file = join(dir, 'bad-line.ndjson');
    // Line 701 (chunk 2 of 3) is broken; blank lines are not tuples and the last line has no newline.
    const broken = [...lines];
    broken[700] = '{"user": "user:u700",';
    writeFileSync(file, broken.slice(0, 3).join('\n') + '\n\n  \n' + broken.slice(3).join('\n'));
    const args = ['tuple', 'import', '--store-id', storeId, file, '--chunk-size', '500', '--in-flight', '1'];
    const bad = await latch(args, env);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('validation_error');
    expect(JSON.parse(readFileSync(`${file}.import-state`, 'utf8'))).toMatchObject({ chunks_done: 1, written: 500 });
    expect((await exportKeys(storeId)).length).toBe(500);
    writeFileSync(file, lines.slice(0, 3).join('\n') + '\n\n  \n' + lines.slice(3).join('\n'));
    const r = json<{ written: number; resumed_after: number; sent: number }>(await latch(args, env));
    expect([r.written, r.resumed_after, r.sent]).toEqual([1_500, 1, 1_000]);
    expect(await changeKeys(storeId)).toEqual(all.map(key));
  }, 120_000);

  it('a CSV file, then export as NDJSON and CSV, imported again into another store, round trips', async () => {
    const a = await newStore('import-csv-a');
    const csv = join(dir, 'in.csv');
    writeFileSync(
      csv,
      'user_type,user_id,user_relation,relation,object_type,object_id\n' +
        Array.from({ length: 120 }, (_, i) => `user,u${i},,viewer,document,d${i}`).join('\n') +
        '\n',
    );
    expect(
      json<{ written: number }>(await latch(['tuple', 'import', '--store-id', a, '--file', csv], env)).written,
    ).toBe(120);
    const ndjson = join(dir, 'out.ndjson');
    const exportedA = await latch(['tuple', 'export', '--store-id', a], env);
    writeFileSync(ndjson, exportedA.out);
    const b = await newStore('import-csv-b');
    expect(json<{ written: number }>(await latch(['tuple', 'import', '--store-id', b, ndjson], env)).written).toBe(120);
    const csvOut = await latch(['tuple', 'export', '--store-id', b, '--format', 'csv'], env);
    expect(csvOut.code, csvOut.err).toBe(0);
    const c = await newStore('import-csv-c');
    const csvFile = join(dir, 'out.csv');
    writeFileSync(csvFile, csvOut.out);
    expect(json<{ written: number }>(await latch(['tuple', 'import', '--store-id', c, csvFile], env)).written).toBe(
      120,
    );
    const want = await exportKeys(a);
    expect(want.length).toBe(120);
    expect(await exportKeys(b)).toEqual(want);
    expect(await exportKeys(c)).toEqual(want);
  });

  it('refuses a state file of another store, and a chunk size over the limit', async () => {
    const storeId = await newStore('import-state-other');
    const file = join(dir, 'other.ndjson');
    writeFileSync(file, JSON.stringify(tuple(1)) + '\n');
    writeFileSync(
      `${file}.import-state`,
      JSON.stringify({ store_id: 'someone-else', chunk_size: 10_000, chunks_done: 1 }),
    );
    const r = await latch(['tuple', 'import', '--store-id', storeId, file], env);
    expect(r.code).toBe(2);
    expect(r.err).toContain('someone-else');
    const big = await latch(['tuple', 'import', '--store-id', storeId, file, '--chunk-size', '50001'], env);
    expect(big.code).toBe(2);
  });
});
