// Reads the settings table (./settings.ts) from argv, the environment and a config file, checks
// every value, and turns the result into the server's options. Any mistake is a UsageError that
// names where the value came from (`--port`, `LATCH_PORT` or `config file latch.yaml: port`).

import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { AuthConfigError, isLoopback, resolveAuthConfig, type AuthConfig, type AuthMode } from '../api/auth/config.js';
import type { EngineConfig } from '../engine/contract.js';
import type { LogFormat, LogLevel, LogSettings } from '../log.js';
import type { ServerOptions } from '../main.js';
import { threadsRefusal } from '../http/threads/threads.js';
import { parseArgs, UsageError, type CommandSpec, type FlagSpec } from './args.js';
import { latchVersion } from './version.js';
import type { OtelExporter, OtelSettings } from './otel.js';
import { parseRateLimits } from './rate-limits.js';
import { envName, SETTINGS, SETTINGS_BY_NAME, type Setting, type SettingValue } from './settings.js';

type Source = 'flag' | 'env' | 'file' | 'default';

interface ResolvedSettings {
  readonly values: ReadonlyMap<string, SettingValue>;
  readonly sources: ReadonlyMap<string, Source>;
}

/** The flags of the table for the shared argv parser (values are checked here, not there). */
const SERVE_SPEC: CommandSpec = {
  path: 'serve',
  summary: 'Run the HTTP API and the msgpack channel.',
  positionals: [],
  flags: SETTINGS.map((s): FlagSpec => ({
    name: s.name,
    kind: s.kind === 'boolean' ? 'boolean' : 'string',
    help: s.help,
  })),
};

function fromString(s: Setting, raw: string, where: string): SettingValue {
  switch (s.kind) {
    case 'integer': {
      const n = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
      if (!Number.isSafeInteger(n) || n < (s.min ?? 0) || n > (s.max ?? Number.MAX_SAFE_INTEGER)) {
        throw new UsageError(
          `${where} must be an integer from ${s.min ?? 0} to ${s.max ?? Number.MAX_SAFE_INTEGER}, got '${raw}'`,
        );
      }
      return n;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw new UsageError(`${where} must be true or false, got '${raw}'`);
      return raw === 'true';
    case 'choice':
      if (!s.choices?.includes(raw))
        throw new UsageError(`${where} must be one of ${s.choices?.join(', ')}; got '${raw}'`);
      return raw;
    case 'list':
      return raw
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean);
    case 'string':
      if (raw === '') throw new UsageError(`${where} needs a value`);
      return raw;
  }
}

/** A config-file value: YAML/JSON scalars of the right type, or strings read as on the command line. */
function fromFile(s: Setting, v: unknown, where: string): SettingValue {
  if (s.kind === 'list' && Array.isArray(v)) {
    if (!v.every((k) => typeof k === 'string')) throw new UsageError(`${where} must be a list of strings`);
    return v as string[];
  }
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return fromString(s, String(v), where);
  const what =
    s.kind === 'list' ? 'a list or a comma-separated string' : s.kind === 'integer' ? 'an integer' : `a ${s.kind}`;
  throw new UsageError(`${where} must be ${what}, got ${JSON.stringify(v)}`);
}

/** The config file's settings by name; unknown keys and unreadable files are usage errors. */
function readConfigFile(path: string): Map<string, SettingValue> {
  let doc: unknown;
  try {
    const text = readFileSync(path, 'utf8');
    doc = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new UsageError(`config file ${path}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (doc === null || doc === undefined) return new Map();
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new UsageError(`config file ${path}: expected a mapping of setting names to values`);
  const out = new Map<string, SettingValue>();
  for (const [key, v] of Object.entries(doc)) {
    const s = SETTINGS_BY_NAME.get(key);
    if (!s || s.noFile) throw new UsageError(`config file ${path}: unknown setting '${key}' (see latch serve --help)`);
    out.set(key, fromFile(s, v, `config file ${path}: ${key}`));
  }
  return out;
}

/** Every setting from flag > environment > config file > default. */
export function resolveSettings(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ResolvedSettings {
  const args = parseArgs(SERVE_SPEC, argv);
  const values = new Map<string, SettingValue>();
  const sources = new Map<string, Source>();
  const pick = (s: Setting): [SettingValue, Source] | undefined => {
    const flag = args.string(s.name);
    if (flag !== undefined) return [fromString(s, flag, `--${s.name}`), 'flag'];
    const e = env[envName(s)];
    if (e !== undefined && e !== '') return [fromString(s, e, envName(s)), 'env'];
    return undefined;
  };
  const configPath = pick(SETTINGS_BY_NAME.get('config') as Setting)?.[0];
  const file = typeof configPath === 'string' ? readConfigFile(configPath) : new Map<string, SettingValue>();
  for (const s of SETTINGS) {
    const hit =
      pick(s) ??
      (file.has(s.name) ? ([file.get(s.name) as SettingValue, 'file'] as [SettingValue, Source]) : undefined);
    if (hit) {
      values.set(s.name, hit[0]);
      sources.set(s.name, hit[1]);
    } else if (s.default !== undefined) {
      values.set(s.name, s.default);
      sources.set(s.name, 'default');
    }
  }
  return { values, sources };
}

/** What `latch serve` runs with. */
export interface ServeConfig {
  readonly server: ServerOptions;
  /** The OpenTelemetry SDK to start before the server (exporter `none`: nothing is started). */
  readonly otel: OtelSettings;
  readonly shutdownTimeoutMs: number;
  readonly log: LogSettings;
}

class Reader {
  constructor(private readonly values: ReadonlyMap<string, SettingValue>) {}
  str(name: string): string | undefined {
    const v = this.values.get(name);
    return typeof v === 'string' ? v : undefined;
  }
  int(name: string): number {
    const v = this.values.get(name);
    if (typeof v !== 'number') throw new Error(`setting ${name} has no integer value`);
    return v;
  }
  optInt(name: string): number | undefined {
    const v = this.values.get(name);
    return typeof v === 'number' ? v : undefined;
  }
  bool(name: string): boolean {
    return this.values.get(name) === true;
  }
  list(name: string): readonly string[] | undefined {
    const v = this.values.get(name);
    return Array.isArray(v) ? (v as readonly string[]) : undefined;
  }
}

function engineConfig(r: Reader): Partial<EngineConfig> {
  return {
    resolveDepth: r.int('resolve-depth'),
    listObjectsMaxResults: r.int('list-objects-max-results'),
    listObjectsDeadlineMs: r.int('list-objects-deadline'),
    listUsersMaxResults: r.int('list-users-max-results'),
    listUsersDeadlineMs: r.int('list-users-deadline'),
    listPageDeadlineMs: r.int('list-page-deadline'),
    checkDeadlineMs: r.int('check-deadline'),
    maxBatchCheckItems: r.int('max-batch-check-items'),
    maxContextualTuples: r.int('max-contextual-tuples'),
    maxTuplesPerWrite: r.int('max-tuples-per-write'),
    workers: r.int('workers'),
    cacheSize: r.int('cache-size'),
    pollIntervalMs: r.int('poll-interval'),
    history: { maxUndo: r.int('history-max-undo') },
  };
}

function authConfig(r: Reader, rateLimitsFrom: string): AuthConfig {
  return {
    ...parseRateLimits(r.list('rate-limits'), rateLimitsFrom),
    mode: (r.str('auth-mode') ?? 'none') as AuthMode,
    issuer: r.str('auth-issuer'),
    audience: r.str('auth-audience'),
    jwksUri: r.str('auth-jwks-uri'),
    presharedKeys: r.list('auth-preshared-keys'),
    tokenTtlSeconds: r.optInt('auth-token-ttl'),
    allowNonLoopback: r.bool('auth-allow-non-loopback'),
    logRetentionDays: r.optInt('log-retention-days'),
    adminKey: r.str('auth-admin-key'),
  };
}

/** --decision-log: a number in [0, 1]. */
function sampling(text: string): number {
  const v = Number(text);
  if (text.trim() === '' || !Number.isFinite(v) || v < 0 || v > 1)
    throw new UsageError(`--decision-log: '${text}' is not a sampling rate in [0, 1]`);
  return v;
}

/** `host:port` or `[v6]:port` of --metrics-addr; `where` names the source in errors. */
function address(text: string, where: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  if (!m || port > 65535)
    throw new UsageError(`${where} must be host:port (e.g. 127.0.0.1:9090 or [::1]:9090), got '${text}'`);
  return { host: (m[1] ?? m[2]) as string, port };
}

function metricsAddress(r: Reader, resolved: ResolvedSettings): { host: string; port: number } | undefined {
  const text = r.str('metrics-addr');
  if (text === undefined) return undefined;
  const source = resolved.sources.get('metrics-addr');
  const where =
    source === 'env' ? 'LATCH_METRICS_ADDR' : source === 'file' ? 'config file: metrics-addr' : '--metrics-addr';
  if (!r.bool('metrics')) throw new UsageError(`${where} needs metrics on (it is set, and so is --metrics=false)`);
  return address(text, where);
}

/** `--authzen-base-url`: an http(s) origin with an optional path, no query or fragment; no trailing slash. */
function baseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`authzen-base-url must be an http or https URL, got '${raw}'`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new UsageError(`authzen-base-url must be an http or https URL without query or fragment, got '${raw}'`);
  }
  return raw.replace(/\/+$/, '');
}

/**
 * --playground: as set, else on in auth mode `none` on loopback. Only an explicit request fails
 * the start when the playground was not built; the default logs a warning instead.
 */
function playgroundOption(resolved: ResolvedSettings, mode: AuthMode, host: string): ServerOptions['playground'] {
  const v = resolved.values.get('playground');
  if (v === undefined) return mode === 'none' && isLoopback(host) ? { required: false } : undefined;
  return v === true ? { required: true } : undefined;
}

/** `--placement` and its settings; only on PostgreSQL (the registry lives there). */
function placementConfig(r: Reader, datastore: string): ServerOptions['placement'] {
  if (!r.bool('placement')) return undefined;
  if (datastore !== 'postgres')
    throw new UsageError('--placement needs --datastore postgres (the membership lives there)');
  const advertiseUrl = r.str('advertise-url');
  if (advertiseUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(advertiseUrl);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'http:' || url.pathname !== '/' || url.search !== '')
      throw new UsageError(`advertise-url must be an http URL of the node (http://host:port), got '${advertiseUrl}'`);
  }
  return {
    replicas: r.int('replicas'),
    capacity: r.int('capacity'),
    advertiseUrl,
    nodeId: r.str('node-id'),
    leaseMs: r.int('placement-lease'),
  };
}

/** The server options of resolved settings; an auth configuration that cannot start is a UsageError. */
export function serveConfig(resolved: ResolvedSettings): ServeConfig {
  const r = new Reader(resolved.values);
  const host = r.str('host') ?? '127.0.0.1';
  const datastore = (r.str('datastore') ?? 'leveldb') as 'memory' | 'leveldb' | 'postgres';
  const postgresUrl = r.str('postgres-url');
  if (datastore === 'postgres' && !postgresUrl)
    throw new UsageError('--datastore postgres needs --postgres-url (or LATCH_POSTGRES_URL)');
  const source = resolved.sources.get('rate-limits');
  const auth = authConfig(
    r,
    source === 'env' ? 'LATCH_RATE_LIMITS' : source === 'file' ? 'config file: rate-limits' : '--rate-limits',
  );
  try {
    const refusal = r.int('http-threads') > 1 ? threadsRefusal(resolveAuthConfig(auth, host)) : undefined;
    if (refusal) throw new UsageError(refusal);
    resolveAuthConfig(auth, host);
  } catch (err) {
    if (err instanceof AuthConfigError) throw new UsageError(err.message);
    throw err;
  }
  return {
    server: {
      host,
      port: r.int('port'),
      httpThreads: r.int('http-threads'),
      datastore,
      dataDir: datastore === 'leveldb' ? r.str('data-dir') : undefined,
      postgres:
        datastore === 'postgres' && postgresUrl
          ? {
              url: postgresUrl,
              poolSize: r.int('postgres-pool-size'),
              statementTimeoutMs: r.int('postgres-statement-timeout'),
              migrate: r.bool('postgres-migrate'),
              startTimeoutMs: r.int('postgres-start-timeout'),
            }
          : undefined,
      placement: placementConfig(r, datastore),
      bodyLimit: r.int('body-limit'),
      tokenSecret: r.str('token-secret'),
      authzenBaseUrl: baseUrl(r.str('authzen-base-url')),
      corsOrigins: r.list('cors-origin'),
      trustedProxies: r.list('trusted-proxy'),
      liveStreams: {
        perClient: r.int('stream-max-per-client'),
        total: r.int('stream-max'),
        maxLifetimeMs: r.int('stream-lifetime'),
      },
      metrics: r.bool('metrics'),
      metricsAddress: metricsAddress(r, resolved),
      playground: playgroundOption(resolved, auth.mode, host),
      engine: engineConfig(r),
      auth,
      decisionLog: {
        sampling: sampling(r.str('decision-log') ?? '0'),
        retentionDays: r.int('decision-log-retention-days'),
        maxBytes: r.int('decision-log-max-bytes'),
      },
    },
    otel: {
      exporter: (r.str('otel-exporter') ?? 'none') as OtelExporter,
      endpoint: r.str('otel-endpoint'),
      serviceName: r.str('otel-service-name') ?? 'latch',
      serviceVersion: latchVersion(),
    },
    shutdownTimeoutMs: r.int('shutdown-timeout'),
    log: {
      level: r.str('log-level') as LogLevel,
      format: r.str('log-format') as LogFormat,
      requests: r.bool('log-requests'),
    },
  };
}
