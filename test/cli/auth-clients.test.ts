// `latch client …` on a real auth database in a temporary data directory.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latch, type Run } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'latch-clients-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const json = <T>(r: Run): T => {
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as T;
};

interface ClientView {
  client_id: string;
  client_secret?: string;
  store_id: string;
  scopes: string[];
  name: string;
  revoked_at: string | null;
  rotated_at: string | null;
}

describe('latch client', () => {
  it('create → list → rotate → revoke', async () => {
    const env = { LATCH_DATA_DIR: dir };
    const a = json<ClientView>(
      await latch(
        [
          'client',
          'create',
          '--store',
          '01J5Y0M8Q3ZKX7T9B2C4D6F8GH',
          '--scopes',
          'read:tuples,check:tuples,check:tuples',
          '--name',
          'web',
        ],
        env,
      ),
    );
    expect(a.client_secret).toEqual(expect.any(String));
    expect(a.scopes).toEqual(['check:tuples', 'read:tuples']);
    const b = json<ClientView>(
      await latch(['client', 'create', '--store', '*', '--scopes', 'create:stores', '--data-dir', dir]),
    );

    const listed = json<{ clients: ClientView[] }>(await latch(['client', 'list'], env));
    expect(listed.clients.map((c) => c.client_id)).toEqual([a.client_id, b.client_id]);
    expect(listed.clients.every((c) => c.client_secret === undefined)).toBe(true);
    expect(JSON.stringify(listed)).not.toContain('scrypt');

    const rotated = json<ClientView>(await latch(['client', 'rotate', a.client_id], env));
    expect(rotated.client_secret).not.toBe(a.client_secret);
    expect(rotated.rotated_at).not.toBeNull();

    const revoked = json<ClientView>(await latch(['client', 'revoke', a.client_id], env));
    expect(revoked.revoked_at).not.toBeNull();
    const again = await latch(['client', 'rotate', a.client_id], env);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`no active client '${a.client_id}'`);
  });

  it('refuses bad input with exit code 2', async () => {
    const cases: [string[], string][] = [
      [['client', 'create', '--scopes', 'read:tuples'], 'missing --store'],
      [['client', 'create', '--store', 'nope', '--scopes', 'read:tuples'], '--store must be a store id or *'],
      [['client', 'create', '--store', '*', '--scopes', 'read:tuples,fly:kites'], 'unknown: fly:kites'],
      [['client', 'rotate'], 'missing argument <client_id>'],
      [['client', 'list', '--verbose'], "unknown option '--verbose'"],
    ];
    for (const [argv, message] of cases) {
      const r = await latch([...argv, '--data-dir', dir]);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toContain(message);
    }
    const key = join(dir, 'private.json');
    writeFileSync(key, JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'secret' }));
    const r = await latch([
      'client',
      'create',
      '--store',
      '*',
      '--scopes',
      'read:stores',
      '--public-key',
      key,
      '--data-dir',
      dir,
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('private material');
  });

  it.each(['create', 'list', 'rotate', 'revoke'])('client %s --help exits 0', async (sub) => {
    const r = await latch(['client', sub, '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Usage: latch client ${sub}`);
  });
});
