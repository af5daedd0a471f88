// The settings of `latch serve`, as data: one row per setting drives the flags, the `LATCH_…`
// environment variables, the config-file keys, `latch serve --help`, docs/configuration.md and
// validation. Precedence: flag > environment > config file > default.
//
// Example: the row {name: 'port', kind: 'integer', default: 8080, min: 0, max: 65535} is read
// from `--port 9000`, else `LATCH_PORT=9000`, else `port: 9000` in the config file, else 8080.

import { LOG_FORMATS, LOG_LEVELS } from '../log.js';
import { DEFAULT_ENGINE_CONFIG as E, DEFAULT_HISTORY_LIMITS } from '../engine/config.js';
import { PLACEMENT_SETTINGS } from './settings-placement.js';

export type SettingKind = 'string' | 'integer' | 'boolean' | 'list' | 'choice';
export type SettingValue = string | number | boolean | readonly string[];

export interface Setting {
  /** Flag name (`--list-objects-max-results`) and config-file key. */
  readonly name: string;
  readonly group: 'Server' | 'PostgreSQL' | 'Placement' | 'Limits' | 'Engine' | 'Logging' | 'Authentication';
  readonly kind: SettingKind;
  readonly help: string;
  /** Applied when no source sets it; undefined = unset (the help says what that means). */
  readonly default?: SettingValue | undefined;
  /** Shown instead of the default when it depends on other settings. */
  readonly defaultNote?: string;
  /** Help placeholder, e.g. `<ms>`. */
  readonly value?: string;
  readonly choices?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  /** Not accepted in a config file (`config` itself). */
  readonly noFile?: boolean;
  /** Never echoed back (keys, secrets); prefer the environment over a flag. */
  readonly secret?: boolean;
}

/** `list-objects-max-results` → `LATCH_LIST_OBJECTS_MAX_RESULTS`. */
export function envName(s: Pick<Setting, 'name'>): string {
  return 'LATCH_' + s.name.toUpperCase().replace(/-/g, '_');
}

const MS_MAX = 3_600_000;

export const SETTINGS: readonly Setting[] = [
  {
    name: 'config',
    group: 'Server',
    kind: 'string',
    value: '<file>',
    noFile: true,
    help: 'Config file (YAML or JSON) with any of these settings by name',
  },
  { name: 'host', group: 'Server', kind: 'string', value: '<addr>', default: '127.0.0.1', help: 'Interface to bind' },
  {
    name: 'port',
    group: 'Server',
    kind: 'integer',
    value: '<n>',
    default: 8080,
    min: 0,
    max: 65535,
    help: 'TCP port (0 = any free port)',
  },
  {
    name: 'datastore',
    group: 'Server',
    kind: 'choice',
    choices: ['leveldb', 'memory', 'postgres'],
    default: 'leveldb',
    help: 'Where stores live: LevelDB in --data-dir, memory (lost on exit), or PostgreSQL at --postgres-url (shared by replicas)',
  },
  {
    name: 'data-dir',
    group: 'Server',
    kind: 'string',
    value: '<dir>',
    default: './data',
    help: 'LevelDB data directory',
  },
  {
    name: 'body-limit',
    group: 'Server',
    kind: 'integer',
    value: '<bytes>',
    default: 1_048_576,
    min: 1,
    max: 2 ** 31 - 1,
    help: 'Largest request body',
  },
  {
    name: 'shutdown-timeout',
    group: 'Server',
    kind: 'integer',
    value: '<ms>',
    default: 8000,
    min: 0,
    max: MS_MAX,
    help: 'On SIGTERM/SIGINT: how long in-flight requests may take to finish',
  },
  {
    name: 'metrics',
    group: 'Server',
    kind: 'boolean',
    default: true,
    help: 'Serve Prometheus metrics at GET /metrics (no authentication)',
  },
  {
    name: 'otel-exporter',
    group: 'Logging',
    kind: 'choice',
    choices: ['none', 'otlp', 'console'],
    default: 'none',
    help: 'Start the OpenTelemetry SDK and export spans: otlp (HTTP, to --otel-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT) or console (stdout); needs the SDK packages (docs/operations.md)',
  },
  {
    name: 'otel-endpoint',
    group: 'Logging',
    kind: 'string',
    value: '<url>',
    help: "OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces (default: the exporter's, from OTEL_EXPORTER_OTLP_ENDPOINT)",
  },
  {
    name: 'otel-service-name',
    group: 'Logging',
    kind: 'string',
    value: '<name>',
    default: 'latch',
    help: 'The service.name resource attribute (more attributes: OTEL_RESOURCE_ATTRIBUTES=key=value,…)',
  },
  {
    name: 'metrics-addr',
    group: 'Server',
    kind: 'string',
    value: '<host:port>',
    defaultNote: 'the API port',
    help: 'Serve /metrics on its own address instead ([::1]:9090 for IPv6); the API port then has no /metrics',
  },
  {
    name: 'stream-max-per-client',
    group: 'Server',
    kind: 'integer',
    value: '<n>',
    default: 100,
    min: 1,
    max: 1_000_000,
    help: 'Live streams (Watch, ReadExpansions) one client may hold open; more get 429 stream_limit_exceeded',
  },
  {
    name: 'stream-max',
    group: 'Server',
    kind: 'integer',
    value: '<n>',
    default: 2000,
    min: 1,
    max: 1_000_000,
    help: 'Live streams open on the server in all; more get 429 stream_limit_exceeded',
  },
  {
    name: 'stream-lifetime',
    group: 'Server',
    kind: 'integer',
    value: '<ms>',
    default: 3_600_000,
    min: 1000,
    max: MS_MAX,
    help: 'A live stream ends after this long with deadline_exceeded; the consumer resumes from its last token',
  },
  {
    name: 'cors-origin',
    group: 'Server',
    kind: 'list',
    value: '<origin,…>',
    defaultNote: 'any origin when authenticating; none in auth mode none',
    help: 'Browser origins allowed to call the API (https://app.example.com, or * for any); other origins get 403 forbidden',
  },
  {
    name: 'authzen-base-url',
    group: 'Server',
    kind: 'string',
    value: '<url>',
    defaultNote: 'http://<Host header>',
    help: 'Origin the AuthZEN metadata names, e.g. https://authz.example.com (docs/authzen.md)',
  },
  {
    name: 'playground',
    group: 'Server',
    kind: 'boolean',
    defaultNote: 'on in auth mode none on a loopback address, else off',
    help: 'Serve the browser playground at /playground (docs/playground.md)',
  },
  {
    name: 'token-secret',
    group: 'Server',
    kind: 'string',
    value: '<secret>',
    secret: true,
    defaultNote: 'a key kept in the datastore',
    help: 'Key of continuation tokens; unset: one generated once and kept in the datastore (shared by every node on PostgreSQL; random per process for memory)',
  },

  {
    name: 'postgres-url',
    group: 'PostgreSQL',
    kind: 'string',
    value: '<url>',
    secret: true,
    help: '--datastore postgres: postgres://user:password@host:port/database (libpq URL; prefer the environment, it holds a password)',
  },
  {
    name: 'postgres-pool-size',
    group: 'PostgreSQL',
    kind: 'integer',
    value: '<n>',
    default: 10,
    min: 1,
    max: 1000,
    help: "Connections per process (plus one that listens for other nodes' commits)",
  },
  {
    name: 'postgres-statement-timeout',
    group: 'PostgreSQL',
    kind: 'integer',
    value: '<ms>',
    default: 30_000,
    min: 0,
    max: MS_MAX,
    help: 'statement_timeout of every connection (0 = none); a statement cut off answers 503 unavailable',
  },
  {
    name: 'postgres-migrate',
    group: 'PostgreSQL',
    kind: 'boolean',
    default: true,
    help: 'Create or upgrade the schema at start (under a database lock); false: refuse to start unless `latch migrate` has brought it to this version',
  },
  {
    name: 'postgres-start-timeout',
    group: 'PostgreSQL',
    kind: 'integer',
    value: '<ms>',
    default: 30_000,
    min: 0,
    max: MS_MAX,
    help: 'At start, how long an unreachable database is retried (with backoff) before latch exits 1; wrong credentials or schema exit at once',
  },
  ...PLACEMENT_SETTINGS,

  {
    name: 'resolve-depth',
    group: 'Limits',
    kind: 'integer',
    value: '<n>',
    default: E.resolveDepth,
    min: 1,
    max: 100,
    help: 'Deepest rewrite/userset recursion before resolution_too_complex',
  },
  {
    name: 'list-objects-max-results',
    group: 'Limits',
    kind: 'integer',
    value: '<n>',
    default: E.listObjectsMaxResults,
    min: 1,
    max: 1_000_000,
    help: 'ListObjects answers at most this many objects',
  },
  {
    name: 'list-objects-deadline',
    group: 'Limits',
    kind: 'integer',
    value: '<ms>',
    default: E.listObjectsDeadlineMs,
    min: 1,
    max: MS_MAX,
    help: 'ListObjects returns what it found by then',
  },
  {
    name: 'list-users-max-results',
    group: 'Limits',
    kind: 'integer',
    value: '<n>',
    default: E.listUsersMaxResults,
    min: 1,
    max: 1_000_000,
    help: 'ListUsers answers at most this many users',
  },
  {
    name: 'list-users-deadline',
    group: 'Limits',
    kind: 'integer',
    value: '<ms>',
    default: E.listUsersDeadlineMs,
    min: 1,
    max: MS_MAX,
    help: 'ListUsers returns what it confirmed by then',
  },
  {
    name: 'list-page-deadline',
    group: 'Limits',
    kind: 'integer',
    value: '<ms>',
    default: E.listPageDeadlineMs,
    min: 1,
    max: MS_MAX,
    help: 'A paged ListObjects/ListUsers (page_size, continuation_token) computes its complete answer by then, else 422 throttled_timeout_error',
  },
  {
    name: 'check-deadline',
    group: 'Limits',
    kind: 'integer',
    value: '<ms>',
    default: E.checkDeadlineMs,
    min: 1,
    max: MS_MAX,
    help: 'A Check still evaluating by then answers 422 throttled_timeout_error',
  },
  {
    name: 'max-batch-check-items',
    group: 'Limits',
    kind: 'integer',
    value: '<n>',
    default: E.maxBatchCheckItems,
    min: 1,
    max: 10000,
    help: 'Checks per BatchCheck request',
  },
  {
    name: 'history-max-undo',
    group: 'Limits',
    kind: 'integer',
    value: '<n>',
    default: DEFAULT_HISTORY_LIMITS.maxUndo,
    min: 0,
    max: 100_000_000,
    help: 'Changes a query at a past revision may undo (docs/audit.md); farther back: 400 revision_too_far_back',
  },
  {
    name: 'max-contextual-tuples',
    group: 'Limits',
    kind: 'integer',
    value: '<n>',
    default: E.maxContextualTuples,
    min: 0,
    max: 100,
    help: "Contextual tuples per query (at most the API's 100)",
  },
  {
    name: 'max-tuples-per-write',
    group: 'Limits',
    kind: 'integer',
    value: '<n>',
    default: E.maxTuplesPerWrite,
    min: 1,
    max: 100,
    help: "Writes plus deletes per Write request (at most the API's 100)",
  },

  {
    name: 'http-threads',
    group: 'Server',
    kind: 'integer',
    value: '<n>',
    default: 1,
    min: 1,
    max: 256,
    help: 'Threads serving HTTP and the channel on the one port, over one engine (auth none, preshared or oidc; no rate limits or store logs)',
  },
  {
    name: 'workers',
    group: 'Engine',
    kind: 'integer',
    value: '<n>',
    default: E.workers,
    min: 0,
    max: 256,
    help: 'Worker threads for large check batches (0 = all on the main thread)',
  },
  {
    name: 'cache-size',
    group: 'Engine',
    kind: 'integer',
    value: '<entries>',
    default: E.cacheSize,
    min: 0,
    max: 100_000_000,
    help: 'Check result cache, for Checks without HIGHER_CONSISTENCY, contextual tuples or context (0 = off)',
  },
  {
    name: 'poll-interval',
    group: 'Engine',
    kind: 'integer',
    value: '<ms>',
    default: E.pollIntervalMs,
    min: 0,
    max: MS_MAX,
    help: "How often each loaded store's committed revision is read, to follow writes of other nodes when a change notification is late or lost (0 = notifications only)",
  },

  {
    name: 'log-level',
    group: 'Logging',
    kind: 'choice',
    choices: LOG_LEVELS,
    default: 'info',
    help: 'Least severe level written to stderr',
  },
  {
    name: 'log-format',
    group: 'Logging',
    kind: 'choice',
    choices: LOG_FORMATS,
    default: 'json',
    help: 'One JSON object per line, or text with key=value fields',
  },
  {
    name: 'log-requests',
    group: 'Logging',
    kind: 'boolean',
    default: false,
    help: 'One info line per HTTP request (request id = the X-Request-Id header)',
  },

  {
    name: 'auth-mode',
    group: 'Authentication',
    kind: 'choice',
    choices: ['none', 'preshared', 'oidc', 'client-credentials'],
    default: 'none',
    help: 'none (loopback only unless forced), preshared, oidc, client-credentials (docs/auth.md)',
  },
  {
    name: 'auth-issuer',
    group: 'Authentication',
    kind: 'string',
    value: '<url>',
    help: "oidc: the external issuer; client-credentials: latch's own issuer URL",
  },
  {
    name: 'auth-audience',
    group: 'Authentication',
    kind: 'string',
    value: '<url>',
    help: "This region's base URL; tokens must carry it + '/' as audience",
  },
  {
    name: 'auth-jwks-uri',
    group: 'Authentication',
    kind: 'string',
    value: '<url>',
    defaultNote: '<issuer>/.well-known/jwks.json',
    help: 'oidc: JWKS URL',
  },
  {
    name: 'auth-preshared-keys',
    group: 'Authentication',
    kind: 'list',
    value: '<k1,k2>',
    secret: true,
    help: 'preshared: keys, comma-separated, ≥ 16 characters each (prefer the environment: command lines are visible to local users)',
  },
  {
    name: 'auth-admin-key',
    group: 'Authentication',
    kind: 'string',
    value: '<key>',
    secret: true,
    help: 'client-credentials: operator key (≥ 16 characters) for the /clients endpoints only, e.g. `latch client create --api-url … --api-token <key>` (prefer the environment)',
  },
  {
    name: 'auth-token-ttl',
    group: 'Authentication',
    kind: 'integer',
    value: '<seconds>',
    default: 3600,
    min: 1,
    max: 31_536_000,
    help: 'client-credentials: lifetime of issued tokens',
  },
  {
    name: 'auth-allow-non-loopback',
    group: 'Authentication',
    kind: 'boolean',
    default: false,
    help: 'Mode none: serve without authentication on a non-loopback address',
  },
  {
    name: 'rate-limits',
    group: 'Authentication',
    kind: 'list',
    value: '<class=rate[:burst],…>',
    defaultNote: 'none in mode none; otherwise 10M/s per class',
    help: 'Rate limits (D7) per (client, store) and operation class: check=200:400,write=20/s,all=1000; auth-failures and token-failures budget failed credentials per address (e.g. token-failures=10/m:10)',
  },
  {
    name: 'log-retention-days',
    group: 'Authentication',
    kind: 'integer',
    value: '<days>',
    min: 0,
    max: 3650,
    defaultNote: '7; 0 in mode none',
    help: 'Store-log retention (0 = not recorded)',
  },
];

export const SETTINGS_BY_NAME: ReadonlyMap<string, Setting> = new Map(SETTINGS.map((s) => [s.name, s]));
