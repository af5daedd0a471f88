// The `Latch` an HTTP thread serves (`--http-threads`): Check and BatchCheck are answered on this
// thread from the shared index when they can be (`local-check.ts`, which says when they cannot);
// everything else is forwarded to the main thread's one engine (one index, one write path), so
// answers, errors, revisions and consistency tokens are the ones the main thread gives. Calls leave in batches, one message per turn of the
// event loop; streams arrive within a window of STREAM_WINDOW items, acknowledged as consumed.

import type { MessagePort } from 'node:worker_threads';
import type {
  BatchCheckResult,
  CheckIdsInput,
  CheckInput,
  CheckResult,
  EngineConfig,
  EngineStats,
  HeldStore,
  ImpactInput,
  ImpactStream,
  Latch,
  StringTable,
} from '../../engine/contract.js';
import type { AppError } from '../../errors.js';
import { LocalChecker, type LocalCheckData } from './local-check.js';
import {
  errorsFromWire,
  errorsToWire,
  fromWire,
  STREAM_WINDOW,
  type ItemsMsg,
  type ToMain,
  type ToThread,
  type WireError,
} from './protocol.js';

interface Waiter {
  resolve(v: unknown): void;
  reject(e: Error): void;
}

/** A stream's items as they arrive; `take` resolves with the next one (undefined at the end). */
class Inbox {
  readonly items: unknown[] = [];
  end = false;
  error: WireError | undefined;
  wake: (() => void) | undefined;
  push(m: ItemsMsg): void {
    for (const v of m.vs) this.items.push(v);
    if (m.end) this.end = true;
    if (m.e) this.error = m.e;
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

type Method<K extends keyof Latch> = Latch[K] extends (...a: infer A) => infer R ? (...a: A) => R : never;

export class RemoteLatch implements Latch {
  private nextId = 1;
  private out: ToMain[] = [];
  private scheduled = false;
  private readonly waiting = new Map<number, Waiter>();
  private readonly inboxes = new Map<number, Inbox>();
  private readonly tableIds = new WeakMap<StringTable, { id: number; sent: number }>();
  private nextTable = 1;
  private readonly tableGone = new FinalizationRegistry<number>((table) => this.post({ t: 'drop-table', table }));
  private lastStats: EngineStats;

  /** Check and BatchCheck answered on this thread from the shared index, when the main thread offers it. */
  readonly local: LocalChecker | undefined;

  constructor(
    private readonly port: Pick<MessagePort, 'postMessage'>,
    readonly config: EngineConfig,
    stats: EngineStats,
    local?: LocalCheckData,
    /** This thread's words of the metrics share: the local Checks' result-cache counts. */
    counts?: Float64Array,
  ) {
    this.lastStats = stats;
    this.local =
      local &&
      new LocalChecker(local, config, (storeId, modelId) => this.call('threadModel', storeId, modelId), counts);
  }

  /** Messages from the main thread (answers, stream items, figures). */
  receive(batch: readonly ToThread[]): void {
    for (const m of batch) {
      if (m.t === 'ok' || m.t === 'err') {
        const w = this.waiting.get(m.id);
        if (!w) continue;
        this.waiting.delete(m.id);
        if (m.t === 'ok') w.resolve(m.v);
        else w.reject(fromWire(m.e));
      } else if (m.t === 'items') this.inboxes.get(m.id)?.push(m);
      else if (m.t === 'stats') this.lastStats = m.v as EngineStats;
    }
  }

  /** Fails every pending call (the main thread is gone). */
  failAll(e: WireError): void {
    for (const w of this.waiting.values()) w.reject(fromWire(e));
    this.waiting.clear();
    for (const box of this.inboxes.values()) box.push({ t: 'items', id: 0, vs: [], end: true, e });
  }

  private post(m: ToMain): void {
    this.out.push(m);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.out;
      this.out = [];
      this.port.postMessage(batch);
    });
  }

  private call<T>(op: string, ...args: unknown[]): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.post({ t: 'call', id, op, args });
    });
  }

  /** A stream opened on the main thread; `first` receives impact's leading value. */
  private async *stream<T>(
    op: string,
    arg: unknown,
    signal: AbortSignal | undefined,
    id = this.open(op, arg),
  ): AsyncGenerator<T> {
    const box = this.inboxes.get(id) as Inbox;
    const onAbort = (): void => box.push({ t: 'items', id, vs: [], end: true });
    signal?.addEventListener('abort', onAbort, { once: true });
    let consumed = 0;
    try {
      for (;;) {
        if (box.items.length > 0) {
          yield box.items.shift() as T;
          if (++consumed >= STREAM_WINDOW / 2) {
            this.post({ t: 'ack', id, n: consumed });
            consumed = 0;
          }
          continue;
        }
        if (box.error) throw fromWire(box.error);
        if (box.end || signal?.aborted) return;
        await new Promise<void>((r) => (box.wake = r));
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (!box.end || signal?.aborted) this.post({ t: 'cancel', id });
      this.inboxes.delete(id);
    }
  }

  private open(op: string, arg: unknown): number {
    const id = this.nextId++;
    this.inboxes.set(id, new Inbox());
    this.post({ t: 'open', id, op, args: [arg] });
    return id;
  }

  createStore: Method<'createStore'> = (...a) => this.call('createStore', ...a);
  getStore: Method<'getStore'> = (...a) => this.call('getStore', ...a);
  listStores: Method<'listStores'> = (...a) => this.call('listStores', ...a);
  deleteStore: Method<'deleteStore'> = (...a) => this.call('deleteStore', ...a);
  writeModel: Method<'writeModel'> = (...a) => this.call('writeModel', ...a);
  readModel: Method<'readModel'> = (...a) => this.call('readModel', ...a);
  listModels: Method<'listModels'> = (...a) => this.call('listModels', ...a);
  readAssertions: Method<'readAssertions'> = (...a) => this.call('readAssertions', ...a);
  writeAssertions: Method<'writeAssertions'> = (...a) => this.call('writeAssertions', ...a);
  write: Method<'write'> = (...a) => this.call('write', ...a);
  migrateRelations: Method<'migrateRelations'> = (...a) => this.call('migrateRelations', ...a);
  setShadow: Method<'setShadow'> = (...a) => this.call('setShadow', ...a);
  getShadow: Method<'getShadow'> = (...a) => this.call('getShadow', ...a);
  clearShadow: Method<'clearShadow'> = (...a) => this.call('clearShadow', ...a);
  shadowReport: Method<'shadowReport'> = (...a) => this.call('shadowReport', ...a);
  read: Method<'read'> = (...a) => this.call('read', ...a);
  readChanges: Method<'readChanges'> = (...a) => this.call('readChanges', ...a);
  createPermissionIndex: Method<'createPermissionIndex'> = (...a) => this.call('createPermissionIndex', ...a);
  listPermissionIndexes: Method<'listPermissionIndexes'> = (...a) => this.call('listPermissionIndexes', ...a);
  getPermissionIndex: Method<'getPermissionIndex'> = (...a) => this.call('getPermissionIndex', ...a);
  deletePermissionIndex: Method<'deletePermissionIndex'> = (...a) => this.call('deletePermissionIndex', ...a);
  permissionIndexesCaughtUp: Method<'permissionIndexesCaughtUp'> = (...a) =>
    this.call('permissionIndexesCaughtUp', ...a);
  deleteTuples: Method<'deleteTuples'> = (...a) => this.call('deleteTuples', ...a);
  importTuples: Method<'importTuples'> = (...a) => this.call('importTuples', ...a);
  exportTuples: Method<'exportTuples'> = (input, signal) => this.stream('exportTuples', input, signal);
  /** Answered on this thread when the shared index serves it (`LocalChecker`), else by the main thread. */
  check: Method<'check'> = (input) => {
    let r: CheckResult | undefined;
    try {
      r = this.local?.check(input);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return r ? Promise.resolve(r) : this.call('check', input);
  };
  listObjects: Method<'listObjects'> = (...a) => this.call('listObjects', ...a);
  listUsers: Method<'listUsers'> = (...a) => this.call('listUsers', ...a);
  expand: Method<'expand'> = (...a) => this.call('expand', ...a);
  explainCheck: Method<'explainCheck'> = (...a) => this.call('explainCheck', ...a);
  ready: Method<'ready'> = () => this.call('ready');
  sweepExpired: Method<'sweepExpired'> = () => this.call('sweepExpired');
  // Placement (--placement) drives the main thread's engine only; an HTTP thread holds no store itself.
  holdStore = (): Promise<void> => Promise.reject(new Error('placement runs on the main thread'));
  releaseStore = (): void => undefined;
  heldStores = (): HeldStore[] => [];

  /** This thread's answer from the shared index, or undefined: `check` forwards it. */
  checkSync(input: CheckInput): CheckResult | undefined {
    return this.local?.check(input);
  }

  batchCheck: Method<'batchCheck'> = async (input) => {
    const here = this.local?.batchCheck(input);
    if (here) return here;
    const r = await this.call<BatchCheckResult>('batchCheck', input);
    return { ...r, results: errorsFromWire(r.results) as BatchCheckResult['results'] };
  };

  async checkIds(input: CheckIdsInput): Promise<Awaited<ReturnType<Latch['checkIds']>>> {
    const tableId = this.syncTable(input.table);
    const { table: _, errors, ...rest } = input;
    const r = await this.call<{
      result: Awaited<ReturnType<Latch['checkIds']>>;
      outcomes: Uint8Array;
      errors: ReadonlyMap<number, unknown>;
    }>('checkIds', { ...rest, tableId, errors: errorsToWire(errors) });
    input.outcomes.set(r.outcomes);
    input.errors.clear();
    for (const [k, v] of errorsFromWire(r.errors)) input.errors.set(k, v as AppError);
    return r.result;
  }

  /** Sends the table's strings the main thread has not seen yet; its id. */
  private syncTable(table: StringTable): number {
    let t = this.tableIds.get(table);
    if (!t) {
      t = { id: this.nextTable++, sent: 0 };
      this.tableIds.set(table, t);
      this.tableGone.register(table, t.id);
    }
    const n = table.strings.length;
    if (n > t.sent) {
      this.post({ t: 'table', table: t.id, from: t.sent, strings: table.strings.slice(t.sent) });
      t.sent = n;
    }
    return t.id;
  }

  watch: Method<'watch'> = (input, signal) => this.stream('watch', input, signal);
  expansions: Method<'expansions'> = (input, signal) => this.stream('expansions', input, signal);
  streamedListObjects: Method<'streamedListObjects'> = (input, signal) =>
    this.stream('streamedListObjects', input, signal);

  async impact(input: ImpactInput, signal?: AbortSignal): Promise<ImpactStream> {
    const id = this.nextId++;
    const base = new Promise<string>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
    });
    this.inboxes.set(id, new Inbox());
    this.post({ t: 'open', id, op: 'impact', args: [input] });
    let baseModelId: string;
    try {
      baseModelId = await base;
    } catch (err) {
      this.inboxes.delete(id);
      throw err;
    }
    return { baseModelId, lines: this.stream('impact', input, signal, id) };
  }

  stats(): EngineStats {
    return this.lastStats;
  }

  /** The engine is the main thread's: it closes there. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
