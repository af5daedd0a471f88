// The backup and restore procedure of docs/operations.md, run as written: stop the server, tar
// the data directory, later stop, replace the directory with the archive's contents, start.
// The restored server has the stores, models and tuples of the backup, nothing written after.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DOC_MODEL, json, readAll, startLatch, type LatchProcess } from './process.js';

const work = mkdtempSync(path.join(tmpdir(), 'latch-backup-'));
const dataDir = path.join(work, 'data');
const archive = path.join(work, 'latch-backup.tgz');
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function stop(p: LatchProcess): Promise<void> {
  p.proc.kill('SIGTERM');
  expect(await p.exited).toBe(0);
}

const tuples = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => ({
    user: `user:u${(from + i) % 17}`,
    relation: 'viewer',
    object: `doc:${from + i}`,
  }));

describe('backup and restore of the data directory', () => {
  it('tar of a stopped server, restored over a changed directory, brings back exactly the backup', async () => {
    const a = await startLatch(['--data-dir', dataDir]);
    const store = (await json(a.base, 'POST', '/stores', { name: 'backed-up' })).body.id as string;
    const model = (await json(a.base, 'POST', `/stores/${store}/authorization-models`, DOC_MODEL)).body
      .authorization_model_id as string;
    for (let at = 0; at < 300; at += 100)
      expect(
        (await json(a.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: tuples(at, at + 100) } })).status,
      ).toBe(200);
    const before = await readAll(a.base, store);
    await stop(a);

    // Backup (docs/operations.md): with the server stopped.
    execFileSync('tar', ['-C', dataDir, '-czf', archive, '.']);

    // Life goes on: more writes, a delete, a second store.
    const b = await startLatch(['--data-dir', dataDir]);
    await json(b.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: tuples(300, 350) },
      deletes: { tuple_keys: tuples(0, 1) },
    });
    await json(b.base, 'POST', '/stores', { name: 'after-backup' });
    expect((await readAll(b.base, store)).size).toBe(349);
    await stop(b);

    // Restore (docs/operations.md): stop, replace the directory, start.
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir);
    execFileSync('tar', ['-C', dataDir, '-xzf', archive]);
    const c = await startLatch(['--data-dir', dataDir]);
    try {
      expect(await readAll(c.base, store)).toEqual(before);
      const stores = (await json(c.base, 'GET', '/stores')).body.stores as { id: string; name: string }[];
      expect(stores.map((s) => s.name)).toEqual(['backed-up']);
      expect((await json(c.base, 'GET', `/stores/${store}/authorization-models/${model}`)).status).toBe(200);
      const check = (object: string, user: string) =>
        json(c.base, 'POST', `/stores/${store}/check`, { tuple_key: { user, relation: 'viewer', object } });
      expect((await check('doc:0', 'user:u0')).body.allowed).toBe(true);
      expect((await check('doc:320', 'user:u14')).body.allowed).toBe(false);
    } finally {
      await stop(c);
    }
  });
});
