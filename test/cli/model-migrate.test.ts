// `latch model migrate` against a real server on 127.0.0.1: a dry run counts, a copy resumes from
// the state file an interrupted run left, a later run carries writes made meanwhile, finish is
// refused (exit 1, validation_error) until the new model is the latest, then deletes the old tuples.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { call } from '../http/helpers.js';
import { latch } from './helpers.js';

const DIR = 'test/fixtures/migrate';
const MAP = 'document#reader=document#viewer';
const DOCS = 25;
let server: RunningServer;
let base: string;
let dir: string;
let env: Record<string, string>;
let store: string;

const readers = async (relation: string): Promise<number> => {
  // The store holds fewer than 100 tuples: one page of everything.
  const r = await call(base, 'POST', `/stores/${store}/read`, { page_size: 100 });
  return (r.json as { tuples: { key: { relation: string } }[] }).tuples.filter((t) => t.key.relation === relation)
    .length;
};

beforeAll(async () => {
  server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  base = `http://127.0.0.1:${server.port}`;
  dir = mkdtempSync(join(tmpdir(), 'latch-migrate-cli-'));
  env = { LATCH_API_URL: base };
  const created = await latch(['store', 'create', '--name', 'migrate', '--model', `${DIR}/old.fga`], env);
  store = (JSON.parse(created.out) as { store: { id: string } }).store.id;
  const keys = Array.from({ length: DOCS }, (_, i) => ({
    user: `user:u${i % 3}`,
    relation: 'reader',
    object: `document:${i}`,
  }));
  expect((await call(base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: keys } })).status).toBe(200);
});

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('latch model migrate', () => {
  it('dry run, resumed copy, carry, refused and successful finish', async () => {
    const state = join(dir, 'state.json');
    const common = ['model', 'migrate', '--store-id', store, '--map', MAP, '--state', state];
    const dry = await latch([...common, '--model', `${DIR}/new.fga`, '--dry-run'], env);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.out)).toMatchObject({ matching: DOCS, rejected: 0 });
    expect(await readers('viewer')).toBe(0);

    // An interrupted run: one step of 10 done, its cursor in the state file.
    const first = await call(base, 'POST', `/stores/${store}/migrate-relations`, {
      maps: [MAP],
      mode: 'copy',
      candidate: JSON.parse((await latch(['model', 'transform', `${DIR}/new.fga`], env)).out) as unknown,
      limit: 10,
    });
    expect(first.status).toBe(200);
    const cursor = (first.json as { cursor: string }).cursor;
    writeFileSync(state, JSON.stringify({ store, maps: [MAP], cursor, phase: 'copy', updated_at: '' }));
    const resumed = await latch([...common, '--model', `${DIR}/new.fga`, '--batch', '7'], env);
    expect(resumed.err).toBe('');
    expect(JSON.parse(resumed.out)).toMatchObject({ copied: DOCS - 10, phase: 'carry' });
    expect(await readers('viewer')).toBe(DOCS);

    // A write to reader meanwhile is carried by the next run.
    await call(base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [{ user: 'user:late', relation: 'reader', object: 'document:99' }] },
    });
    const carried = await latch([...common, '--model', `${DIR}/new.fga`], env);
    expect(JSON.parse(carried.out)).toMatchObject({ carried: 1 });
    expect(await readers('viewer')).toBe(DOCS + 1);

    const refused = await latch([...common, '--finish'], env);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('validation_error');

    expect((await latch(['model', 'write', '--store-id', store, `${DIR}/new.fga`], env)).code).toBe(0);
    const finished = await latch([...common, '--finish'], env);
    expect(finished.err).toBe('');
    expect(JSON.parse(finished.out)).toMatchObject({ deleted: DOCS + 1, phase: 'done' });
    expect(await readers('reader')).toBe(0);
    expect(await readers('viewer')).toBe(DOCS + 1);
    expect((JSON.parse(readFileSync(state, 'utf8')) as { phase: string }).phase).toBe('done');
  });
});
