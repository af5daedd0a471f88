// `latch model shadow set|report|clear` on the worked example of docs/changing-models.md
// (test/fixtures/impact/): a real server on 127.0.0.1, the candidate written and the base written
// again (so the base stays the latest), a Check that the candidate answers differently, and the
// report in text and JSON; bad sampling is a usage error, an unknown model the server's 404.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { latch } from './helpers.js';

const DIR = 'test/fixtures/impact';
let server: RunningServer;
let env: Record<string, string>;
let storeId: string;
let candidate: string;

const modelId = async (file: string): Promise<string> => {
  const r = await latch(['model', 'write', '--store-id', storeId, file], env);
  expect(r.code).toBe(0);
  return (JSON.parse(r.out) as { authorization_model_id: string }).authorization_model_id;
};

beforeAll(async () => {
  server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  env = { LATCH_API_URL: `http://127.0.0.1:${server.port}` };
  const imported = await latch(['store', 'import', '--file', `${DIR}/store.fga.yaml`], env);
  expect(imported.code).toBe(0);
  storeId = (JSON.parse(imported.out) as { store: { id: string } }).store.id;
  candidate = await modelId(`${DIR}/candidate.fga`);
  await modelId(`${DIR}/base.fga`);
});

afterAll(async () => {
  await server?.close();
});

describe('latch model shadow', () => {
  it('set, a disagreeing Check in the report, clear', async () => {
    const set = await latch(
      ['model', 'shadow', 'set', '--store-id', storeId, '--model-id', candidate, '--sampling', '1'],
      env,
    );
    expect(set.code).toBe(0);
    expect(JSON.parse(set.out)).toMatchObject({ shadow: { authorization_model_id: candidate, sampling: 1 } });

    const check = await fetch(`${env.LATCH_API_URL}/stores/${storeId}/check`, {
      method: 'POST',
      body: JSON.stringify({ tuple_key: { user: 'user:bob', relation: 'editor', object: 'doc:roadmap' } }),
    });
    expect(((await check.json()) as { allowed: boolean }).allowed).toBe(true);

    const report = await vi.waitFor(async () => {
      const r = await latch(['model', 'shadow', 'report', '--store-id', storeId], env);
      expect(r.code).toBe(0);
      expect(r.out).toContain('evaluated 1, disagreements 1, dropped 0');
      return r.out;
    });
    expect(report).toContain(`shadow: model ${candidate}, sampling 1`);
    expect(report).toMatch(/ check doc:roadmap#editor@user:bob rev \d+: true → shadow false\n/);
    const json = await latch(['model', 'shadow', 'report', '--store', storeId, '--format', 'json'], env);
    expect(JSON.parse(json.out)).toMatchObject({ evaluated: 1, disagreements: 1, records: [{ operation: 'check' }] });

    const clear = await latch(['model', 'shadow', 'clear', '--store-id', storeId], env);
    expect(clear.code).toBe(0);
    const after = await latch(['model', 'shadow', 'report', '--store-id', storeId], env);
    expect(after.out).toContain(`shadow: none (figures of model ${candidate})`);
  });

  it('bad sampling is a usage error (2); an unknown model is the server 404 (1)', async () => {
    const bad = await latch(
      ['model', 'shadow', 'set', '--store-id', storeId, '--model-id', candidate, '--sampling', '2'],
      env,
    );
    expect(bad.code).toBe(2);
    const unknown = await latch(
      [
        'model',
        'shadow',
        'set',
        '--store-id',
        storeId,
        '--model-id',
        '01ARZ3NDEKTSV4RRFFQ69G5FAV',
        '--sampling',
        '0.5',
      ],
      env,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('shadow_model_not_found');
  });
});
