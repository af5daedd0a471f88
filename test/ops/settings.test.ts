// The settings table of `latch serve`: precedence flag > LATCH_… env > config file > default,
// help and docs rendered from the table, every wrong value a usage error naming its source.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.js';
import { envName, SETTINGS } from '../../src/cli/settings.js';
import { serveHelp, settingsMarkdown } from '../../src/cli/settings-doc.js';
import { resolveSettings, serveConfig } from '../../src/cli/settings-load.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';

const dir = mkdtempSync(path.join(tmpdir(), 'latch-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

const config = (argv: string[], env: Record<string, string> = {}) => serveConfig(resolveSettings(argv, env));

describe('precedence', () => {
  const yaml = file('latch.yaml', 'port: 7001\nworkers: 3\nlog-format: text\ncache-size: 10\n');

  it('flag > environment > config file > default', () => {
    const r = resolveSettings(['--config', yaml, '--port', '7003'], { LATCH_PORT: '7002', LATCH_WORKERS: '4' });
    expect(r.values.get('port')).toBe(7003);
    expect(r.sources.get('port')).toBe('flag');
    expect(r.values.get('workers')).toBe(4);
    expect(r.sources.get('workers')).toBe('env');
    expect(r.values.get('log-format')).toBe('text');
    expect(r.sources.get('log-format')).toBe('file');
    expect(r.values.get('host')).toBe('127.0.0.1');
    expect(r.sources.get('host')).toBe('default');
  });

  it('the config file may come from LATCH_CONFIG, in JSON too', () => {
    const json = file(
      'latch.json',
      JSON.stringify({
        'list-objects-max-results': 50,
        datastore: 'memory',
        'auth-preshared-keys': ['k'.repeat(16)],
        'auth-mode': 'preshared',
      }),
    );
    const c = config([], { LATCH_CONFIG: json });
    expect(c.server.engine?.listObjectsMaxResults).toBe(50);
    expect(c.server.datastore).toBe('memory');
    expect(c.server.dataDir).toBeUndefined();
    expect(c.server.auth?.presharedKeys).toEqual(['k'.repeat(16)]);
  });

  it('defaults are the engine defaults, 127.0.0.1:8080, ./data, an 8 s shutdown bound', () => {
    const c = config([]);
    expect(c.server).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      datastore: 'leveldb',
      dataDir: './data',
      bodyLimit: 1_048_576,
      metrics: true,
    });
    expect(c.shutdownTimeoutMs).toBe(8000);
    expect(c.server.engine).toMatchObject({
      resolveDepth: DEFAULT_ENGINE_CONFIG.resolveDepth,
      listObjectsDeadlineMs: DEFAULT_ENGINE_CONFIG.listObjectsDeadlineMs,
      workers: DEFAULT_ENGINE_CONFIG.workers,
      cacheSize: DEFAULT_ENGINE_CONFIG.cacheSize,
      pollIntervalMs: DEFAULT_ENGINE_CONFIG.pollIntervalMs,
    });
    expect(c.log).toEqual({ level: 'info', format: 'json', requests: false });
  });

  it('every setting reaches the server options', () => {
    const c = config([
      '--host',
      '127.0.0.2',
      '--port',
      '1',
      '--data-dir',
      '/d',
      '--body-limit',
      '2',
      '--shutdown-timeout',
      '3',
      '--metrics=false',
      '--token-secret',
      's',
      '--resolve-depth',
      '4',
      '--list-objects-max-results',
      '5',
      '--list-objects-deadline',
      '6',
      '--list-users-max-results',
      '7',
      '--list-users-deadline',
      '8',
      '--list-page-deadline',
      '18',
      '--check-deadline',
      '15',
      '--max-batch-check-items',
      '16',
      '--max-contextual-tuples',
      '9',
      '--max-tuples-per-write',
      '10',
      '--workers',
      '11',
      '--cache-size',
      '12',
      '--poll-interval',
      '17',
      '--history-max-undo',
      '19',
      '--log-level',
      'warn',
      '--log-format',
      'text',
      '--log-requests',
      '--auth-mode',
      'oidc',
      '--auth-issuer',
      'https://i.example',
      '--auth-audience',
      'https://a.example',
      '--auth-jwks-uri',
      'https://i.example/k',
      '--auth-token-ttl',
      '13',
      '--log-retention-days',
      '14',
      '--authzen-base-url',
      'https://authz.example.com/',
    ]);
    expect(c.server).toMatchObject({
      host: '127.0.0.2',
      port: 1,
      dataDir: '/d',
      bodyLimit: 2,
      metrics: false,
      tokenSecret: 's',
      authzenBaseUrl: 'https://authz.example.com',
    });
    expect(c.server.engine).toEqual({
      resolveDepth: 4,
      listObjectsMaxResults: 5,
      listObjectsDeadlineMs: 6,
      listUsersMaxResults: 7,
      listUsersDeadlineMs: 8,
      listPageDeadlineMs: 18,
      checkDeadlineMs: 15,
      maxBatchCheckItems: 16,
      maxContextualTuples: 9,
      maxTuplesPerWrite: 10,
      workers: 11,
      cacheSize: 12,
      pollIntervalMs: 17,
      history: { maxUndo: 19 },
    });
    expect(c.shutdownTimeoutMs).toBe(3);
    expect(c.log).toEqual({ level: 'warn', format: 'text', requests: true });
    expect(c.server.auth).toMatchObject({
      mode: 'oidc',
      issuer: 'https://i.example',
      audience: 'https://a.example',
      jwksUri: 'https://i.example/k',
      tokenTtlSeconds: 13,
      logRetentionDays: 14,
    });
  });

  it('the PostgreSQL settings reach the server options; the URL may come from LATCH_POSTGRES_URL', () => {
    const url = 'postgres://latch:pw@db.example:5432/latch';
    const c = config(
      [
        '--datastore',
        'postgres',
        '--postgres-pool-size',
        '3',
        '--postgres-statement-timeout',
        '4',
        '--postgres-migrate=false',
        '--postgres-start-timeout',
        '5',
      ],
      { LATCH_POSTGRES_URL: url },
    );
    expect(c.server.datastore).toBe('postgres');
    expect(c.server.dataDir).toBeUndefined();
    expect(c.server.postgres).toEqual({ url, poolSize: 3, statementTimeoutMs: 4, migrate: false, startTimeoutMs: 5 });
    expect(config(['--datastore', 'postgres', '--postgres-url', url]).server.postgres).toEqual({
      url,
      poolSize: 10,
      statementTimeoutMs: 30_000,
      migrate: true,
      startTimeoutMs: 30_000,
    });
    expect(config(['--postgres-url', url]).server.postgres).toBeUndefined();
  });
});

describe('wrong values are usage errors naming their source', () => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--port', '70000'], {}, /--port must be an integer from 0 to 65535, got '70000'/],
    [['--workers', 'two'], {}, /--workers must be an integer/],
    [[], { LATCH_RESOLVE_DEPTH: '0' }, /LATCH_RESOLVE_DEPTH must be an integer from 1/],
    [['--datastore', 'sqlite'], {}, /--datastore must be one of leveldb, memory, postgres; got 'sqlite'/],
    [['--datastore', 'postgres'], {}, /^--datastore postgres needs --postgres-url \(or LATCH_POSTGRES_URL\)$/],
    [
      ['--datastore', 'postgres', '--postgres-pool-size', '0'],
      { LATCH_POSTGRES_URL: 'postgres://x@127.0.0.1/db' },
      /--postgres-pool-size must be an integer from 1 to 1000, got '0'/,
    ],
    [['--log-level', 'loud'], {}, /--log-level must be one of debug, info, warn, error, silent/],
    [[], { LATCH_METRICS: 'yes' }, /LATCH_METRICS must be true or false/],
    [['--prot', '1'], {}, /unknown option '--prot'/],
    [['--port'], {}, /option --port needs a value/],
    [['extra'], {}, /unexpected argument 'extra'/],
    [['--config', '/no/such/latch.yaml'], {}, /config file \/no\/such\/latch.yaml: ENOENT/],
    [['--auth-mode', 'preshared'], {}, /auth mode 'preshared' needs at least one key/],
    [['--host', '0.0.0.0'], {}, /auth mode 'none' serves 0.0.0.0 without authentication/],
    [['--auth-mode', 'oidc'], {}, /auth mode 'oidc' needs an issuer/],
    [
      ['--authzen-base-url', 'authz.example.com'],
      {},
      /authzen-base-url must be an http or https URL, got 'authz.example.com'/,
    ],
    [
      [],
      { LATCH_AUTHZEN_BASE_URL: 'https://a.example/?x=1' },
      /authzen-base-url must be an http or https URL without query or fragment/,
    ],
  ];
  it.each(cases)('%j %j', (argv, env, message) => {
    expect(() => config(argv, env)).toThrow(UsageError);
    expect(() => config(argv, env)).toThrow(message);
  });

  it('config file mistakes name the file and the key', () => {
    expect(() => config(['--config', file('typo.yaml', 'prot: 1\n')])).toThrow(
      /config file .*typo.yaml: unknown setting 'prot'/,
    );
    expect(() => config(['--config', file('type.yaml', 'port: [1]\n')])).toThrow(
      /config file .*type.yaml: port must be an integer/,
    );
    expect(() => config(['--config', file('range.json', '{"workers": -1}')])).toThrow(
      /range.json: workers must be an integer from 0/,
    );
    expect(() => config(['--config', file('list.yaml', '- port\n')])).toThrow(/expected a mapping/);
    expect(() => config(['--config', file('self.yaml', 'config: other.yaml\n')])).toThrow(/unknown setting 'config'/);
  });
});

describe('help and docs come from the table', () => {
  it('latch serve --help lists every setting with its env name and default', () => {
    const help = serveHelp();
    for (const s of SETTINGS) {
      expect(help).toContain(`--${s.name}`);
      expect(help).toContain(`env ${envName(s)}; default `);
    }
    expect(help).toContain('env LATCH_PORT; default 8080');
    expect(help).toContain('env LATCH_DATA_DIR; default ./data');
  });

  it('docs/configuration.md carries the rendered table exactly', () => {
    const doc = readFileSync(path.resolve(__dirname, '../../docs/configuration.md'), 'utf8');
    const begin = '<!-- settings:begin -->\n';
    const end = '<!-- settings:end -->';
    const table = doc.slice(doc.indexOf(begin) + begin.length, doc.indexOf(end));
    expect(doc.indexOf(begin)).toBeGreaterThan(-1);
    expect(table).toBe(settingsMarkdown());
  });
});
