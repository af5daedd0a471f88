// The decision log (docs/audit.md): which Check, BatchCheck item, ListObjects, ListUsers and
// AuthZEN decisions are recorded (a sampling rate, the server's `--decision-log` or a store's own
// setting), a bounded queue the request path hands them to, and the writer that stores them in
// batches off the request path, keeping the records within their retention and size cap.
// Contract: recording never blocks and never throws — a full queue drops the decision and counts
// it; while no store samples (`active` false) a query pays one boolean read and allocates nothing.

import {
  CHECK_ALLOWED,
  CHECK_ERROR,
  type BatchCheckInput,
  type BatchCheckResult,
  type CheckIdsInput,
  type CheckIdsResult,
  type CheckResult,
  type Evaluated,
  type ListObjectsInput,
  type ListObjectsResult,
  type ListUsersInput,
  type ListUsersResult,
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
interface CheckRequest {
  readonly storeId: string;
  readonly tupleKey: { readonly user: string; readonly relation: string; readonly object: string };
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
}

type Operation =
  'Check' | 'BatchCheck' | 'ListObjects' | 'ListUsers' | 'StreamedListObjects' | 'Evaluation' | 'Evaluations';

/** Operation codes of the pending slots (`Pending.op`): an index into this list. */
const OPERATIONS: readonly Operation[] = [
  'Check',
  'BatchCheck',
  'ListObjects',
  'ListUsers',
  'StreamedListObjects',
  'Evaluation',
  'Evaluations',
];
const OP_CODE: Readonly<Record<Operation, number>> = {
  Check: 0,
  BatchCheck: 1,
  ListObjects: 2,
  ListUsers: 3,
  StreamedListObjects: 4,
  Evaluation: 5,
  Evaluations: 6,
};

/** A listing's request and answer as handed over: the engine's own objects, rendered by the writer. */
type ListingRequest = ListObjectsInput | ListUsersInput;
interface ListingAnswer {
  readonly objects?: readonly string[];
  readonly users?: ListUsersResult['users'];
  readonly next?: string | undefined;
  /** StreamedListObjects: the recorded objects stop at MAX_STREAMED_OBJECTS. */
  readonly truncated?: boolean | undefined;
}

const DAY_MS = 86_400_000;
const FLUSH_AT = 256;
const FLUSH_MS = 50;
/** Pruning for the size cap goes this far below the cap, so that it does not run on every batch. */
const CAP_SLACK = 0.9;
/** Objects of a StreamedListObjects answer recorded at most; past it the answer is marked truncated. */
export const MAX_STREAMED_OBJECTS = 10_000;
const NO_TUPLES: readonly TupleKey[] = Object.freeze([]);

/** A sampling rate must be a number in [0, 1]. */
export function isSampling(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;
}

const json = JSON.stringify;

/**
 * The decisions waiting to be written: parallel arrays of a fixed capacity (`queueMax`), slot i
 * holding the i-th decision since the last flush. The request path copies references to the
 * request's own strings and numbers into the next slot — no object, closure or text is made per
 * decision — and the writer encodes slots 0…count−1 as stored lines, then clears them, all at
 * once and off the request path (`DecisionLog.flush`). Example: a Check of user:bob fills
 * time[0], op[0] = 0 (Check), store[0], model[0], revision[0], instant[0], user[0] = "user:bob",
 * relation[0], object[0], allowed[0] = 1.
 */
class Pending {
  count = 0;
  readonly time: Float64Array;
  readonly revision: Float64Array;
  readonly instant: Float64Array;
  readonly op: Uint8Array;
  /** A checked tuple's answer: 1 allowed, 0 denied. */
  readonly allowed: Uint8Array;
  readonly store: string[];
  readonly client: string[];
  readonly model: string[];
  readonly user: string[];
  readonly relation: string[];
  readonly object: string[];
  /** A BatchCheck item's correlation id; '' for none. */
  readonly correlation: string[];
  readonly contextual: (readonly TupleKey[])[];
  readonly context: (JsonObject | undefined)[];
  readonly listing: (ListingRequest | undefined)[];
  readonly listed: (ListingAnswer | undefined)[];

  constructor(readonly capacity: number) {
    this.time = new Float64Array(capacity);
    this.revision = new Float64Array(capacity);
    this.instant = new Float64Array(capacity);
    this.op = new Uint8Array(capacity);
    this.allowed = new Uint8Array(capacity);
    const strings = (): string[] => new Array<string>(capacity).fill('');
    this.store = strings();
    this.client = strings();
    this.model = strings();
    this.user = strings();
    this.relation = strings();
    this.object = strings();
    this.correlation = strings();
    this.contextual = new Array<readonly TupleKey[]>(capacity).fill(NO_TUPLES);
    this.context = new Array<JsonObject | undefined>(capacity).fill(undefined);
    this.listing = new Array<ListingRequest | undefined>(capacity).fill(undefined);
    this.listed = new Array<ListingAnswer | undefined>(capacity).fill(undefined);
  }

  /** The next free slot with the fields every decision has; -1 when full. */
  claim(time: number, op: Operation, storeId: string, clientId: string, modelId: string, at: Evaluated): number {
    const i = this.count;
    if (i >= this.capacity) return -1;
    this.count = i + 1;
    this.time[i] = time;
    this.op[i] = OP_CODE[op];
    this.store[i] = storeId;
    this.client[i] = clientId;
    this.model[i] = modelId;
    this.revision[i] = at.revision ?? 0;
    this.instant[i] = at.instant ?? 0;
    return i;
  }

  /** Fills slot `i` with a checked tuple. */
  tuple(
    i: number,
    user: string,
    relation: string,
    object: string,
    contextual: readonly TupleKey[],
    context: JsonObject | undefined,
    correlationId: string,
    allowed: boolean,
  ): void {
    this.user[i] = user;
    this.relation[i] = relation;
    this.object[i] = object;
    this.contextual[i] = contextual;
    this.context[i] = context;
    this.correlation[i] = correlationId;
    this.allowed[i] = allowed ? 1 : 0;
  }

  /** Slot i as one stored line (`DecisionLine` of src/storage/decisions.ts). */
  render(i: number, text: TextMemo): string {
    const op = OPERATIONS[this.op[i] as number] as Operation;
    const head = `[${this.time[i]},${text.of(this.client[i] as string)},"${op}",${text.of(this.model[i] as string)},${this.revision[i]},${this.instant[i]},`;
    const listing = this.listing[i];
    if (listing !== undefined) return `${head}${renderListing(op, listing)},${renderListed(this.listed[i])}]`;
    const contextual = this.contextual[i] as readonly TupleKey[];
    const context = this.context[i];
    const corr = this.correlation[i] === '' ? '' : `,${json(this.correlation[i])}`;
    const tuple = `${json(this.user[i])},${text.of(this.relation[i] as string)},${json(this.object[i])}`;
    const extras = `${contextual.length === 0 ? '0' : json(contextual)},${context ? json(context) : '0'}`;
    return `${head}[${tuple},${extras}${corr}],${this.allowed[i]}]`;
  }

  /** Drops the references slots 0…count−1 hold (the strings and objects of their requests). */
  clear(): void {
    for (let i = 0; i < this.count; i++) {
      this.user[i] = this.relation[i] = this.object[i] = this.correlation[i] = '';
      this.store[i] = this.client[i] = this.model[i] = '';
      this.contextual[i] = NO_TUPLES;
      this.context[i] = undefined;
      this.listing[i] = undefined;
      this.listed[i] = undefined;
    }
    this.count = 0;
  }
}

/**
 * The JSON text of strings that repeat from decision to decision (client, model, relation): the
 * last few are kept, so a batch of one store's checks encodes each once. Example: 256 decisions
 * of one client on one model → 2 encodings, not 512.
 */
class TextMemo {
  readonly #keys: string[] = ['', '', '', ''];
  readonly #values: string[] = ['""', '""', '""', '""'];
  #next = 0;

  of(s: string): string {
    const k = this.#keys;
    for (let j = 0; j < 4; j++) if (k[j] === s) return this.#values[j] as string;
    const j = this.#next;
    this.#next = (j + 1) & 3;
    k[j] = s;
    return (this.#values[j] = json(s));
  }
}

function renderListing(op: Operation, q: ListingRequest): string {
  if (op === 'ListUsers') {
    const u = q as ListUsersInput;
    const base = { object: u.object, relation: u.relation, user_filters: u.userFilters };
    return json({ ...base, contextual_tuples: u.contextualTuples, context: u.context ?? null, page: u.page ?? null });
  }
  const o = q as ListObjectsInput;
  const base = { type: o.type, relation: o.relation, user: o.user };
  return json({ ...base, contextual_tuples: o.contextualTuples, context: o.context ?? null, page: o.page ?? null });
}

function renderListed(a: ListingAnswer | undefined): string {
  if (a === undefined) return '{}';
  const out: Record<string, unknown> = a.users !== undefined ? { users: a.users } : { objects: a.objects };
  if (a.next !== undefined) out.next = a.next;
  if (a.truncated === true) out.truncated = true;
  return json(out);
}

/**
 * Slots 0…count−1 as stored batches: per store, in arrival order, a new batch every BATCH_LINES
 * decisions or when a decision is BATCH_SPAN_MS later than its batch's first.
 */
function batches(p: Pending): { storeId: string; batch: string; json: string[] }[] {
  const out: { storeId: string; batch: string; json: string[]; first: number }[] = [];
  const open = new Map<string, { storeId: string; batch: string; json: string[]; first: number }>();
  const text = new TextMemo();
  let last: { storeId: string; batch: string; json: string[]; first: number } | undefined;
  for (let i = 0; i < p.count; i++) {
    const storeId = p.store[i] as string;
    const time = p.time[i] as number;
    let b = last !== undefined && last.storeId === storeId ? last : open.get(storeId);
    if (!b || b.json.length >= BATCH_LINES || time - b.first >= BATCH_SPAN_MS) {
      b = { storeId, batch: batchId(time), json: [], first: time };
      open.set(storeId, b);
      out.push(b);
    }
    last = b;
    b.json.push(p.render(i, text));
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
  /** Made when a store first samples: a server that never records holds no slots. */
  #pending: Pending | undefined;
  #writing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #soon: NodeJS.Immediate | undefined;
  readonly #flushNow = (): void => void this.flush();
  readonly #pruner: NodeJS.Timeout;
  readonly #reloader: NodeJS.Timeout | undefined;
  #recorded = 0;
  #dropped = 0;
  #writes = 0;

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
    const queued = this.#pending?.count ?? 0;
    return { recorded: this.#recorded, dropped: this.#dropped, bytes: this.records.bytes, queued };
  }

  /** Batches written so far (each one key-value write). */
  get writes(): number {
    return this.#writes;
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
    if (any) this.#pending ??= new Pending(this.#queueMax);
    this.active = any;
  }

  #sampled(storeId: string): boolean {
    const r = this.rate(storeId);
    return r >= 1 || (r > 0 && Math.random() < r);
  }

  /**
   * The next pending slot with the fields every decision has, and the write scheduled; -1 (the
   * decision dropped and counted) when `queueMax` decisions wait already.
   */
  #claim(op: Operation, storeId: string, clientId: string, modelId: string, at: Evaluated, time: number): number {
    const p = (this.#pending ??= new Pending(this.#queueMax));
    const i = p.claim(time, op, storeId, clientId, modelId, at);
    if (i < 0) {
      this.#dropped++;
      return i;
    }
    // A full batch is encoded and written right after the current request, not inside it.
    if (i + 1 === FLUSH_AT) this.#soon ??= setImmediate(this.#flushNow);
    else if (i === 0 && this.#timer === undefined) {
      this.#timer = setTimeout(this.#flushNow, FLUSH_MS);
      this.#timer.unref();
    }
    return i;
  }

  /** A Check's (or an AuthZEN evaluation's) decision. */
  check(clientId: string, operation: Operation, q: CheckRequest, r: CheckResult): void {
    if (!this.#sampled(q.storeId)) return;
    const i = this.#claim(operation, q.storeId, clientId, r.modelId, r, Date.now());
    if (i < 0) return;
    const k = q.tupleKey;
    (this.#pending as Pending).tuple(i, k.user, k.relation, k.object, q.contextualTuples, q.context, '', r.allowed);
  }

  /**
   * The answered items of a BatchCheck (or of an AuthZEN evaluations request, or of a group of
   * the msgpack channel's checks, `withCorrelation` false: their correlation ids are the
   * channel's own), each sampled.
   */
  batch(
    clientId: string,
    operation: Operation,
    input: BatchCheckInput,
    r: BatchCheckResult,
    withCorrelation = true,
  ): void {
    const storeId = input.storeId;
    if (this.rate(storeId) <= 0) return;
    const time = Date.now();
    const p = this.#pending as Pending;
    for (const c of input.checks) {
      const o = r.results.get(c.correlationId);
      if (o === undefined || 'error' in o || !this.#sampled(storeId)) continue;
      const i = this.#claim(operation, storeId, clientId, r.modelId, r, time);
      if (i < 0) return;
      const k = c.tupleKey;
      const corr = withCorrelation ? c.correlationId : '';
      p.tuple(i, k.user, k.relation, k.object, c.contextualTuples, c.context, corr, o.allowed);
    }
  }

  /**
   * The checks of a channel check-ids request: check i is (object, relation, user) =
   * `strings[triples[3i…3i+2]]`, answered `outcomes[i]`; failed checks are not decisions.
   */
  checkIds(clientId: string, input: CheckIdsInput, r: CheckIdsResult): void {
    const storeId = input.storeId;
    if (this.rate(storeId) <= 0) return;
    const time = Date.now();
    const p = this.#pending as Pending;
    const { triples, outcomes, context } = input;
    const strings = input.table.strings;
    const n = outcomes.length;
    for (let c = 0; c < n; c++) {
      const o = outcomes[c];
      if (o === CHECK_ERROR || !this.#sampled(storeId)) continue;
      const i = this.#claim('Check', storeId, clientId, r.modelId, r, time);
      if (i < 0) return;
      const object = strings[triples[3 * c] as number] as string;
      const relation = strings[triples[3 * c + 1] as number] as string;
      const user = strings[triples[3 * c + 2] as number] as string;
      p.tuple(i, user, relation, object, NO_TUPLES, context, '', o === CHECK_ALLOWED);
    }
  }

  #listing(
    clientId: string,
    op: Operation,
    q: ListingRequest,
    modelId: string,
    at: Evaluated,
    answer: ListingAnswer,
    sampled = this.#sampled(q.storeId),
  ): void {
    if (!sampled) return;
    const i = this.#claim(op, q.storeId, clientId, modelId, at, Date.now());
    if (i < 0) return;
    const p = this.#pending as Pending;
    p.listing[i] = q;
    p.listed[i] = answer;
  }

  listObjects(clientId: string, q: ListObjectsInput, r: ListObjectsResult): void {
    this.#listing(clientId, 'ListObjects', q, r.modelId, r, r);
  }

  listUsers(clientId: string, q: ListUsersInput, r: ListUsersResult): void {
    this.#listing(clientId, 'ListUsers', q, r.modelId, r, r);
  }

  /**
   * A StreamedListObjects answer once its stream ended, already sampled (`sample`, when the
   * stream began, so that only a sampled stream collects its objects): the objects sent (at most
   * MAX_STREAMED_OBJECTS, then `truncated`), the page's `next`, the model and the point it was
   * evaluated at.
   */
  streamedListObjects(
    clientId: string,
    q: ListObjectsInput,
    modelId: string,
    at: Evaluated,
    answer: { readonly objects: readonly string[]; readonly truncated?: boolean; readonly next?: string | undefined },
  ): void {
    this.#listing(clientId, 'StreamedListObjects', q, modelId, at, answer, true);
  }

  /** Whether this decision of the store is recorded (drawn at its sampling rate). */
  sample(storeId: string): boolean {
    return this.#sampled(storeId);
  }

  /**
   * Encodes every pending decision and writes them (off the request path: a timer or an
   * immediate calls it); resolves when they are stored (or counted as dropped).
   */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#soon) clearImmediate(this.#soon);
    this.#soon = undefined;
    const p = this.#pending;
    if (p === undefined || p.count === 0) return this.#writing;
    const n = p.count;
    let rows: { storeId: string; batch: string; json: string[] }[];
    try {
      rows = batches(p);
    } catch (err) {
      this.#dropped += n;
      logger.log('error', 'decision log encoding failed', { decisions: n, cause: String(err) });
      return this.#writing;
    } finally {
      p.clear();
    }
    this.#writing = this.#writing.then(() => this.#write(rows, n));
    return this.#writing;
  }

  async #write(rows: { storeId: string; batch: string; json: string[] }[], n: number): Promise<void> {
    try {
      let incoming = 0;
      for (const b of rows) for (const j of b.json) incoming += j.length + 1;
      // The cap holds at every moment: room is made before the batch is written.
      if (this.records.bytes + incoming > this.#maxBytes) await this.#makeRoom(incoming);
      await this.records.append(rows);
      this.#recorded += n;
      this.#writes++;
    } catch (err) {
      this.#dropped += n;
      logger.log('error', 'decision log write failed', { decisions: n, cause: String(err) });
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
