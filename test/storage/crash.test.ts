// A real kill test: a child process writes single-tuple batches and reports each acknowledged
// revision; we SIGKILL it mid-burst and check that every acknowledged write survived and that no
// partial write is visible. While the child runs, opening its directory must fail fast.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { openLevelStorage } from '../../src/storage/level.js';
import { DataDirectoryInUseError } from '../../src/storage/lock.js';
import { collect } from './helpers.js';

const WRITER = join(import.meta.dirname, 'crash-writer.ts');

interface Run {
  readonly child: ChildProcess;
  readonly acks: Map<number, number>; // tuple n → revision
  ready: { pid: number; storeId: string };
}

/** Starts the writer; resolves once it has acknowledged `minAcks` writes. */
function startWriter(dir: string, minAcks: number): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const run: Run = { child, acks: new Map(), ready: { pid: 0, storeId: '' } };
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`writer exited early with ${code}`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const [tag, a, b] = line.split(' ');
      if (tag === 'ready') run.ready = { pid: Number(a), storeId: b ?? '' };
      if (tag === 'ack') run.acks.set(Number(a), Number(b));
      if (run.acks.size === minAcks) resolve(run);
    });
  });
}

/** SIGKILLs the child; resolves with the signal that ended it. */
async function kill(child: ChildProcess): Promise<NodeJS.Signals | null> {
  child.removeAllListeners('exit');
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  child.kill('SIGKILL');
  return exited;
}

describe('storage: leveldb survives SIGKILL', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('keeps every acknowledged write and shows no partial write, across two kills', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'latch-crash-'));
    dirs.push(dir);
    const acked = new Map<number, number>();
    for (let round = 0; round < 2; round++) {
      const run = await startWriter(dir, 150);
      // The directory is held by a live process: a second opener fails fast, naming it.
      const err = await openLevelStorage(dir).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DataDirectoryInUseError);
      expect((err as Error).message).toBe(
        `data directory ${dir} is in use by another latch process (pid ${run.ready.pid})`,
      );
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 30)));
      expect(await kill(run.child)).toBe('SIGKILL');
      for (const [n, rev] of run.acks) acked.set(n, rev);

      const s = await openLevelStorage(dir);
      const storeId = run.ready.storeId;
      const revision = await s.revision(storeId);
      expect(revision).toBeGreaterThanOrEqual(Math.max(...acked.values()));
      const changes = await collect(s.changesSince(storeId, 0));
      expect(changes.map((c) => c.revision)).toEqual(Array.from({ length: revision }, (_, i) => i + 1));
      const scan = await s.scanTuples(storeId);
      expect(scan.revision).toBe(revision);
      const tuples = new Set((await collect(scan.tuples)).map((t) => t.object));
      expect(tuples.size).toBe(revision);
      for (const c of changes) expect(tuples.has(c.tuple.object)).toBe(true);
      for (const [n, rev] of acked) {
        expect(tuples.has(`doc:${n}`)).toBe(true);
        expect(changes[rev - 1]?.tuple.object).toBe(`doc:${n}`);
      }
      await s.close();
    }
  });
});
