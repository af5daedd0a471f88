// The decision log (docs/audit.md): which Check, BatchCheck item, ListObjects, ListUsers and
// AuthZEN decisions are recorded (a sampling rate, the server's `--decision-log` or a store's own
// setting), a bounded queue the request path hands them to, and the writer that stores them in
// batches off the request path, keeping the records within their retention and size cap.
// Contract: recording never blocks and never throws — a full queue drops the decision and counts
// it; while no store samples (`active` false) a query pays one boolean read and allocates nothing.

import type {
  BatchCheckInput,
  BatchCheckResult,
  CheckResult,
  Evaluated,
  ListObjectsInput,
  ListObjectsResult,
  ListUsersInput,
  ListUsersResult,
} from '../../engine/contract.js';
import type { JsonObject, TupleKey } from '../../domain/types.js';
import { logger } from '../../log.js';
import { BATCH_LINES, BATCH_SPAN_MS, batchId, type DecisionRecords } from '../../storage/decisions.js';

export interface DecisionLogConfig {
  /** The share of decisions recorded on stores without their own setting, in [0, 1] (default 0: off). */
  readonly sampling?: number | undefined;
  /** Decisions older than this are pruned (default 7 days). */
  readonly retentionDays?: number | undefined;
  /** The records' size cap in bytes; past it the oldest are pruned (default 256 MiB). */
  readonly maxBytes?: number | undefined;
  /** Decisions waiting to be written; past it new ones are dropped and counted (default 10,000). */
  readonly queueMax?: number | undefined;
}

export interface DecisionStats {
  readonly recorded: number;
  readonly dropped: number;
  readonly bytes: number;
  readonly queued: number;
}

/** The request of a checked tuple: what Check, a BatchCheck item and an AuthZEN evaluation share. */
export interface CheckRequest {
  readonly storeId: string;
  readonly tupleKey: { readonly user: string; readonly relation: string; readonly object: string };
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
}

type Operation = 'Check' | 'BatchCheck' | 'ListObjects' | 'ListUsers' | 'Evaluation' | 'Evaluations';

/** A decision as the request path hands it over: references only, rendered by the writer. */
interface Draft {
  readonly time: number;
  readonly clientId: string;
  readonly operation: Operation;
  readonly storeId: string;
  readonly modelId: string;
  readonly evaluated: Evaluated;
  readonly request: object;
  readonly answer: object;
  readonly correlationId?: string | undefined;
}

const DAY_MS = 86_400_000;
const FLUSH_AT = 256;
const FLUSH_MS = 50;
/** Pruning for the size cap goes this far below the cap, so that it does not run on every batch. */
const CAP_SLACK = 0.9;

/** A sampling rate must be a number in [0, 1]. */
export function isSampling(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;
}

const json = JSON.stringify;

/** A checked tuple's request in the stored line form (src/storage/decisions.ts): an array. */
function checkRequest(q: CheckRequest, correlationId: string | undefined): string {
  const k = q.tupleKey;
  const contextual = q.contextualTuples.length === 0 ? '0' : json(q.contextualTuples);
  const corr = correlationId === undefined ? '' : `,${json(correlationId)}`;
  return `[${json(k.user)},${json(k.relation)},${json(k.object)},${contextual},${q.context ? json(q.context) : '0'}${corr}]`;
}

function listObjectsRequest(q: ListObjectsInput): string {
  const base = { type: q.type, relation: q.relation, user: q.user };
  return json({ ...base, contextual_tuples: q.contextualTuples, context: q.context ?? null, page: q.page ?? null });
}

function listUsersRequest(q: ListUsersInput): string {
  const base = { object: q.object, relation: q.relation, user_filters: q.userFilters };
  return json({ ...base, contextual_tuples: q.contextualTuples, context: q.context ?? null, page: q.page ?? null });
}

/** The decision as one stored line (`DecisionLine` of src/storage/decisions.ts), assembled as text. */
function render(d: Draft): string {
  const o = d.operation;
  let request: string;
  if (o === 'ListObjects') request = listObjectsRequest(d.request as ListObjectsInput);
  else if (o === 'ListUsers') request = listUsersRequest(d.request as ListUsersInput);
  else request = checkRequest(d.request as CheckRequest, d.correlationId);
  const answer = d.answer === ALLOWED ? '1' : d.answer === DENIED ? '0' : json(d.answer);
  const at = `${d.evaluated.revision ?? 0},${d.evaluated.instant ?? 0}`;
  return `[${d.time},${json(d.clientId)},"${o}",${json(d.modelId)},${at},${request},${answer}]`;
}

const ALLOWED = Object.freeze({ allowed: true });
const DENIED = Object.freeze({ allowed: false });

/**
 * The drafts as stored batches: per store, in arrival order, a new batch every BATCH_LINES
 * decisions or when a decision is BATCH_SPAN_MS later than its batch's first.
 */
function batches(drafts: readonly Draft[]): { storeId: string; batch: string; json: string[] }[] {
  const out: { storeId: string; batch: string; json: string[]; first: number }[] = [];
  const open = new Map<string, { storeId: string; batch: string; json: string[]; first: number }>();
  for (const d of drafts) {
    let b = open.get(d.storeId);
    if (!b || b.json.length >= BATCH_LINES || d.time - b.first >= BATCH_SPAN_MS) {
      b = { storeId: d.storeId, batch: batchId(d.time), json: [], first: d.time };
      open.set(d.storeId, b);
      out.push(b);
    }
    b.json.push(render(d));
  }
  return out;
}

export class DecisionLog {
  /** True while some store samples: the only thing a query reads when none does. */
  active = false;
  readonly #default: number;
  readonly #retentionMs: number;
  readonly #maxBytes: number;
  readonly #queueMax: number;
  #rates = new Map<string, number>();
  #queue: Draft[] = [];
  #writing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  readonly #pruner: NodeJS.Timeout;
  readonly #reloader: NodeJS.Timeout | undefined;
  #recorded = 0;
  #dropped = 0;

  private constructor(
    readonly records: DecisionRecords,
    config: DecisionLogConfig,
    reloadMs: number,
  ) {
    this.#default = config.sampling ?? 0;
    this.#retentionMs = (config.retentionDays ?? 7) * DAY_MS;
    this.#maxBytes = config.maxBytes ?? 256 * 1024 * 1024;
    this.#queueMax = config.queueMax ?? 10_000;
    this.#pruner = setInterval(() => void this.prune(), 3_600_000);
    this.#pruner.unref();
    // Several nodes share PostgreSQL: each reads the stores' settings again now and then.
    this.#reloader = reloadMs > 0 ? setInterval(() => void this.reload(), reloadMs) : undefined;
    this.#reloader?.unref();
  }

  /** `reloadMs` > 0: read the stores' settings again at that period (PostgreSQL, several nodes). */
  static async open(records: DecisionRecords, config: DecisionLogConfig, reloadMs = 0): Promise<DecisionLog> {
    const log = new DecisionLog(records, config, reloadMs);
    await log.reload();
    await log.prune();
    return log;
  }

  get retentionMs(): number {
    return this.#retentionMs;
  }

  get stats(): DecisionStats {
    return { recorded: this.#recorded, dropped: this.#dropped, bytes: this.records.bytes, queued: this.#queue.length };
  }

  /** The share of a store's decisions recorded: its own setting, else the server's. */
  rate(storeId: string): number {
    return this.#rates.get(storeId) ?? this.#default;
  }

  /** The store's own setting (undefined: the server's applies). */
  storeSetting(storeId: string): number | undefined {
    return this.#rates.get(storeId);
  }

  async setSampling(storeId: string, sampling: number | undefined): Promise<void> {
    await this.records.setSampling(storeId, sampling);
    if (sampling === undefined) this.#rates.delete(storeId);
    else this.#rates.set(storeId, sampling);
    this.#refreshActive();
  }

  async reload(): Promise<void> {
    try {
      this.#rates = await this.records.settings();
      this.#refreshActive();
    } catch (err) {
      logger.log('warn', 'decision log settings reload failed', { cause: String(err) });
    }
  }

  #refreshActive(): void {
    let any = this.#default > 0;
    for (const r of this.#rates.values()) any ||= r > 0;
    this.active = any;
  }

  #sampled(storeId: string): boolean {
    const r = this.rate(storeId);
    return r >= 1 || (r > 0 && Math.random() < r);
  }

  #push(d: Draft): void {
    if (this.#queue.length >= this.#queueMax) {
      this.#dropped++;
      return;
    }
    this.#queue.push(d);
    if (this.#queue.length >= FLUSH_AT) void this.flush();
    else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.#timer.unref();
    }
  }

  /** A Check's (or an AuthZEN evaluation's) decision. */
  check(clientId: string, operation: Operation, q: CheckRequest, r: CheckResult): void {
    if (!this.#sampled(q.storeId)) return;
    const answer = r.allowed ? ALLOWED : DENIED;
    const time = Date.now();
    this.#push({ time, clientId, operation, storeId: q.storeId, modelId: r.modelId, evaluated: r, request: q, answer });
  }

  /** The answered items of a BatchCheck (or of an AuthZEN evaluations request), each sampled. */
  batch(clientId: string, operation: Operation, input: BatchCheckInput, r: BatchCheckResult): void {
    if (this.rate(input.storeId) <= 0) return;
    const time = Date.now();
    for (const c of input.checks) {
      const o = r.results.get(c.correlationId);
      if (o === undefined || 'error' in o || !this.#sampled(input.storeId)) continue;
      const answer = o.allowed ? ALLOWED : DENIED;
      const request: CheckRequest = { storeId: input.storeId, ...c };
      const base = { time, clientId, operation, storeId: input.storeId, modelId: r.modelId };
      this.#push({ ...base, evaluated: r, request, answer, correlationId: c.correlationId });
    }
  }

  listObjects(clientId: string, q: ListObjectsInput, r: ListObjectsResult): void {
    if (!this.#sampled(q.storeId)) return;
    const answer = r.next === undefined ? { objects: r.objects } : { objects: r.objects, next: r.next };
    const base = { time: Date.now(), clientId, operation: 'ListObjects' as const, storeId: q.storeId };
    this.#push({ ...base, modelId: r.modelId, evaluated: r, request: q, answer });
  }

  listUsers(clientId: string, q: ListUsersInput, r: ListUsersResult): void {
    if (!this.#sampled(q.storeId)) return;
    const answer = r.next === undefined ? { users: r.users } : { users: r.users, next: r.next };
    const base = { time: Date.now(), clientId, operation: 'ListUsers' as const, storeId: q.storeId };
    this.#push({ ...base, modelId: r.modelId, evaluated: r, request: q, answer });
  }

  /** Writes every queued decision; resolves when they are stored (or counted as dropped). */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#queue;
    if (batch.length === 0) return this.#writing;
    this.#queue = [];
    this.#writing = this.#writing.then(() => this.#write(batch));
    return this.#writing;
  }

  async #write(batch: readonly Draft[]): Promise<void> {
    try {
      const rows = batches(batch);
      let incoming = 0;
      for (const b of rows) for (const j of b.json) incoming += j.length + 1;
      // The cap holds at every moment: room is made before the batch is written.
      if (this.records.bytes + incoming > this.#maxBytes) await this.#makeRoom(incoming);
      await this.records.append(rows);
      this.#recorded += batch.length;
    } catch (err) {
      this.#dropped += batch.length;
      logger.log('error', 'decision log write failed', { decisions: batch.length, cause: String(err) });
    }
  }

  async #makeRoom(incoming: number): Promise<void> {
    // Each batch adds its two keys (≈ 130 bytes) to the lines' bytes.
    const room = this.#maxBytes * CAP_SLACK - incoming - 256;
    await this.records.prune(Date.now() - this.#retentionMs, Math.max(0, room));
  }

  /** Drops decisions past the retention, then the oldest while the records exceed the cap. */
  async prune(now = Date.now()): Promise<number> {
    try {
      const cap = this.records.bytes > this.#maxBytes ? this.#maxBytes * CAP_SLACK : this.#maxBytes;
      return await this.records.prune(now - this.#retentionMs, cap);
    } catch (err) {
      logger.log('error', 'decision log pruning failed', { cause: String(err) });
      return 0;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#pruner);
    if (this.#reloader) clearInterval(this.#reloader);
    await this.flush();
    await this.records.close();
  }
}
