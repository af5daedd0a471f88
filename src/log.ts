// The process's structured log on stderr: one line per event, JSON (default) or `key=value` text,
// filtered by level. Request lines (one per HTTP request, level info) are off unless enabled:
// they are buffered and written once per event-loop turn, so a busy server makes one write
// syscall per turn instead of one per request. Errors are written at once.
//
// Example: {"time":"2026-01-02T03:04:05.000Z","level":"info","msg":"request","request_id":"…",
// "endpoint":"Check","store_id":"01J…","status":200,"duration_ms":0.41}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'json' | 'text';

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface LogSettings {
  readonly level?: LogLevel | undefined;
  readonly format?: LogFormat | undefined;
  /** One info line per HTTP request (needs level info or debug). */
  readonly requests?: boolean | undefined;
}

type Fields = Readonly<Record<string, unknown>>;

function textValue(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s === undefined ? '' : /[\s"=]/.test(s) ? JSON.stringify(s) : s;
}

class Logger {
  private rank = RANK.info;
  private format: LogFormat = 'json';
  /** True when request lines are written; checked once per request. */
  requests = false;
  private pending = '';
  private scheduled = false;

  private settings: LogSettings = {};

  /** What `configure` was last given (an HTTP thread's logger is configured the same). */
  current(): LogSettings {
    return this.settings;
  }

  configure(s: LogSettings): void {
    this.settings = { level: s.level, format: s.format, requests: s.requests };
    this.rank = RANK[s.level ?? 'info'];
    this.format = s.format ?? 'json';
    this.requests = (s.requests ?? false) && this.rank <= RANK.info;
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.rank && level !== 'silent';
  }

  log(level: Exclude<LogLevel, 'silent'>, msg: string, fields: Fields = {}): void {
    if (!this.enabled(level)) return;
    this.pending += this.line(level, msg, fields);
    if (level === 'error' || level === 'warn') this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Writes buffered lines now (also on exit, so nothing logged is dropped). */
  readonly flush = (): void => {
    this.scheduled = false;
    if (this.pending === '') return;
    const out = this.pending;
    this.pending = '';
    // stderr is synchronous for files and pipes on Linux; a closed pipe emits 'error', not a throw.
    process.stderr.write(out);
  };

  private line(level: string, msg: string, fields: Fields): string {
    const time = new Date().toISOString();
    if (this.format === 'json') return JSON.stringify({ time, level, msg, ...fields }) + '\n';
    let s = `${time} ${level.toUpperCase()} ${msg}`;
    for (const k in fields) if (fields[k] !== undefined) s += ` ${k}=${textValue(fields[k])}`;
    return s + '\n';
  }
}

/** The one logger of the process (`latch serve` configures it from its settings). */
export const logger = new Logger();
process.on('exit', logger.flush);

/** Configures the process logger. */
export function configureLogging(s: LogSettings): void {
  logger.configure(s);
}

/** The request line: endpoint name, store, status (499 = client went away), duration. */
export function logRequest(
  requestId: string,
  endpoint: string,
  storeId: string | undefined,
  status: number,
  code: string,
  ms: number,
): void {
  logger.log('info', 'request', {
    request_id: requestId,
    endpoint,
    store_id: storeId,
    status,
    code: code || undefined,
    duration_ms: Math.round(ms * 1000) / 1000,
  });
}
