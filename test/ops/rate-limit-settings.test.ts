// Rate limits (docs/reference/decisions.md D7) from `latch serve` settings: the flag, LATCH_RATE_LIMITS and the
// config file give the same buckets, wrong entries are usage errors naming their source, and a
// server started from them answers 429 once a bucket is spent.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.js';
import { resolveSettings, serveConfig } from '../../src/cli/settings-load.js';
import { startServer } from '../../src/main.js';

const dir = mkdtempSync(path.join(tmpdir(), 'latch-rate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = (argv: string[], env: Record<string, string> = {}) => serveConfig(resolveSettings(argv, env));

describe('rate-limits setting', () => {
  it('the flag, the environment and the config file give the same buckets', () => {
    const yaml = path.join(dir, 'latch.yaml');
    writeFileSync(yaml, 'rate-limits:\n  - check=200:400\n  - write=20/m\n  - token-failures=10/m:10\n');
    const fromFile = config(['--config', yaml]).server.auth;
    const fromFlag = config(['--rate-limits', 'check=200:400,write=20/m,token-failures=10/m:10']).server.auth;
    const fromEnv = config([], { LATCH_RATE_LIMITS: 'check=200:400, write=20/m, token-failures=10/m:10' }).server.auth;
    for (const a of [fromFile, fromFlag, fromEnv]) {
      expect(a?.rateLimits).toEqual({ write: { perSecond: 20 / 60, burst: 1 }, check: { perSecond: 200, burst: 400 } });
      expect(a?.tokenFailures).toEqual({ perSecond: 10 / 60, burst: 10 });
      expect(a?.authFailures).toBeUndefined();
    }
  });

  it('`all` sets every class not named', () => {
    const limits = config(['--rate-limits', 'all=50,check=1000:2000']).server.auth?.rateLimits;
    expect(limits?.check).toEqual({ perSecond: 1000, burst: 2000 });
    expect(limits?.write).toEqual({ perSecond: 50, burst: 50 });
    expect(Object.keys(limits ?? {})).toHaveLength(13);
  });

  it('wrong entries are usage errors naming where they came from', () => {
    expect(() => config(['--rate-limits', 'chek=1'])).toThrow(
      new UsageError(
        `--rate-limits: unknown class 'chek' (one of all, stores, model-read, model-write, assertions, read, write, read-changes, check, expand, list-objects, list-users, logs, indexes, auth-failures, token-failures)`,
      ),
    );
    expect(() => config([], { LATCH_RATE_LIMITS: 'check=fast' })).toThrow(
      /^LATCH_RATE_LIMITS: 'check=fast' is not <class>=<rate>/,
    );
    expect(() => config(['--rate-limits', 'check=0'])).toThrow("--rate-limits: the rate of 'check' must be above 0");
    expect(() => config(['--rate-limits', 'check=1:0'])).toThrow(
      "--rate-limits: the burst of 'check' must be an integer ≥ 1",
    );
    expect(() => config(['--rate-limits', 'check=1,check=2'])).toThrow("--rate-limits: 'check' is given twice");
  });

  it('a server started with --rate-limits check=1:2 answers the third Check 429 with Retry-After', async () => {
    const c = config(['--rate-limits', 'check=1:2', '--datastore', 'memory', '--port', '0']);
    const server = await startServer(c.server);
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const post = (p: string, body: unknown) => fetch(base + p, { method: 'POST', body: JSON.stringify(body) });
      const store = ((await (await post('/stores', { name: 'limited' })).json()) as { id: string }).id;
      const model = {
        schema_version: '1.1',
        type_definitions: [
          { type: 'user' },
          {
            type: 'doc',
            relations: { viewer: { this: {} } },
            metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
          },
        ],
      };
      expect((await post(`/stores/${store}/authorization-models`, model)).status).toBe(201);
      const check = { tuple_key: { user: 'user:a', relation: 'viewer', object: 'doc:1' } };
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await post(`/stores/${store}/check`, check)).status);
      expect(statuses).toEqual([200, 200, 429]);
      const refused = await post(`/stores/${store}/check`, check);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(((await refused.json()) as { code: string }).code).toBe('rate_limit_exceeded');
      expect((await post(`/stores/${store}/read`, {})).status).toBe(200); // other classes unaffected
    } finally {
      await server.close();
    }
  });
});
