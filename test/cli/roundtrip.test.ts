// `store export` then `store import` into a fresh server round-trips the model, the tuples and
// the assertions exactly, for every fixture (DSL models, a JSON model, a modular model,
// conditioned tuples, tests with their own tuples and contexts).

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { FgaHttpClient } from '../../src/cli/http-client.js';
import { latch } from './helpers.js';

const FIXTURES = readdirSync('test/fixtures')
  .filter((f) => f.endsWith('.fga.yaml'))
  .map((f) => `test/fixtures/${f}`);

let source: RunningServer;
let fresh: RunningServer;
let dir: string;
const url = (s: RunningServer) => `http://127.0.0.1:${s.port}`;

beforeAll(async () => {
  source = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  fresh = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  dir = mkdtempSync(join(tmpdir(), 'latch-roundtrip-'));
});

afterAll(async () => {
  await source?.close();
  await fresh?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function importFile(server: RunningServer, file: string): Promise<{ storeId: string; modelId: string }> {
  const r = await latch(['store', 'import', '--file', file, '--api-url', url(server)]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  const out = JSON.parse(r.out) as { store: { id: string }; model: { authorization_model_id: string } };
  return { storeId: out.store.id, modelId: out.model.authorization_model_id };
}

async function snapshot(server: RunningServer, storeId: string, modelId: string) {
  const client = new FgaHttpClient({ apiUrl: url(server) });
  const { id: _id, ...model } = await client.getModel(storeId, modelId);
  const tuples = (await client.readAll(storeId)).map((t) => JSON.stringify(t.key)).sort();
  const assertions = (await client.readAssertions(storeId, modelId)).map((a) => JSON.stringify(a)).sort();
  return { name: (await client.getStore(storeId)).name, model, tuples, assertions };
}

describe('store export → store import', () => {
  it.each(FIXTURES)('%s round-trips model and tuples exactly', async (fixture) => {
    const a = await importFile(source, fixture);
    const exported = join(dir, `${a.storeId}.fga.yaml`);
    const exp = await latch(['store', 'export', '--store-id', a.storeId, '-o', exported], {
      LATCH_API_URL: url(source),
    });
    expect(exp.code).toBe(0);

    const b = await importFile(fresh, exported);
    const before = await snapshot(source, a.storeId, a.modelId);
    const after = await snapshot(fresh, b.storeId, b.modelId);
    expect(after.tuples.length).toBeGreaterThan(0);
    expect(after.assertions.length).toBeGreaterThan(0);
    expect(after).toEqual(before);

    // Exporting the copy gives the same file again.
    const again = await latch(['store', 'export', '--store-id', b.storeId], { LATCH_API_URL: url(fresh) });
    const first = await latch(['store', 'export', '--store-id', a.storeId], { LATCH_API_URL: url(source) });
    expect(again.out).toBe(first.out);
  });

  it('the exported file is itself a runnable store file: its assertions pass as tests', async () => {
    const a = await importFile(source, 'test/fixtures/multi-tenant-rbac.fga.yaml');
    const exported = join(dir, 'rbac.fga.yaml');
    await latch(['store', 'export', '--store-id', a.storeId, '-o', exported, '--api-url', url(source)]);
    const r = await latch(['test', exported]);
    expect(r.code).toBe(0);
    // 36 checks of the two tests without tuples, 3 of the test with its own tuples.
    expect(r.out).toContain('PASS: files 1/1, tests 2/2 passed; checks 39/39');
  });
});
