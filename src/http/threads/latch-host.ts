// The main thread's side of one HTTP thread (`--http-threads`): runs the engine calls that thread
// forwards on this process's one `Latch` (one index, one write path, one revision feed), answers
// them in batches (one message per turn of the event loop), and pumps streams within their credit.

import type { MessagePort } from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';
import type { CheckIdsInput, CheckInput, Latch } from '../../engine/contract.js';
import type { AppError } from '../../errors.js';
import {
  errorsFromWire,
  errorsToWire,
  STREAM_WINDOW,
  toWire,
  type CallMsg,
  type OpenMsg,
  type ToMain,
  type ToThread,
} from './protocol.js';

/** The methods an HTTP thread may call: the API's operations, never `close`. */
export const CALL_OPS = new Set([
  'createStore',
  'getStore',
  'listStores',
  'deleteStore',
  'writeModel',
  'readModel',
  'listModels',
  'readAssertions',
  'writeAssertions',
  'write',
  'migrateRelations',
  'setShadow',
  'getShadow',
  'clearShadow',
  'shadowReport',
  'read',
  'readChanges',
  'createPermissionIndex',
  'listPermissionIndexes',
  'getPermissionIndex',
  'deletePermissionIndex',
  'permissionIndexesCaughtUp',
  'deleteTuples',
  'check',
  'batchCheck',
  'checkIds',
  'threadModel',
  'listObjects',
  'listUsers',
  'expand',
  'explainCheck',
  'ready',
  'sweepExpired',
]);
export const STREAM_OPS = new Set(['watch', 'expansions', 'streamedListObjects', 'impact', 'exportTuples']);

type Port = Pick<MessagePort, 'postMessage'> | Pick<Worker, 'postMessage'>;

interface Pump {
  readonly abort: AbortController;
  credit: number;
  wake: (() => void) | undefined;
  iterator: AsyncIterator<unknown> | undefined;
}

export class LatchHost {
  private out: ToThread[] = [];
  private scheduled = false;
  private readonly streams = new Map<number, Pump>();
  /** checkIds' error maps while their calls run (the answer carries them back). */
  private readonly checkIdsErrors = new Map<WiredCheckIds, Map<number, AppError>>();
  /** Each channel connection's string table, one object for its life (the engine caches per table). */
  private readonly tables = new Map<number, { readonly strings: string[] }>();

  constructor(
    private readonly latch: Latch,
    private readonly port: Port,
  ) {}

  receive(batch: readonly ToMain[]): void {
    for (const m of batch) {
      if (m.t === 'call') this.call(m);
      else if (m.t === 'open') void this.open(m);
      else if (m.t === 'ack') this.ack(m.id, m.n);
      else if (m.t === 'cancel') this.cancel(m.id);
      else if (m.t === 'table') {
        let t = this.tables.get(m.table);
        if (!t) this.tables.set(m.table, (t = { strings: [] }));
        if (t.strings.length === m.from) for (const s of m.strings) t.strings.push(s);
      } else this.tables.delete(m.table);
    }
  }

  /** Ends every stream (the HTTP thread is gone or the server is closing). */
  closeAll(): void {
    for (const id of [...this.streams.keys()]) this.cancel(id);
    this.tables.clear();
  }

  send(m: ToThread): void {
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

  private call(m: CallMsg): void {
    if (!CALL_OPS.has(m.op)) return this.send({ t: 'err', id: m.id, e: { message: `unknown operation ${m.op}` } });
    let p: Promise<unknown>;
    try {
      p = this.invoke(m.op, m.args);
    } catch (err) {
      return this.send({ t: 'err', id: m.id, e: toWire(err) });
    }
    p.then(
      (v) => this.send({ t: 'ok', id: m.id, v: this.wire(m.op, v, m.args) }),
      (err: unknown) => this.send({ t: 'err', id: m.id, e: toWire(err) }),
    );
  }

  private invoke(op: string, args: readonly unknown[]): Promise<unknown> {
    const latch = this.latch;
    if (op === 'check') {
      // As the HTTP route does: at once when the index and model are loaded, else the async path.
      const input = args[0] as CheckInput;
      const r = latch.checkSync(input);
      return r !== undefined ? Promise.resolve(r) : latch.check(input);
    }
    if (op === 'checkIds') return latch.checkIds(this.checkIdsInput(args[0] as WiredCheckIds));
    const fn = (latch as unknown as Record<string, (...a: readonly unknown[]) => Promise<unknown>>)[op];
    if (typeof fn !== 'function') throw new Error(`unknown operation ${op}`);
    return fn.call(latch, ...args);
  }

  /** checkIds fills its input's outcomes and errors: they travel back in the answer. */
  private wire(op: string, v: unknown, args: readonly unknown[]): unknown {
    if (op === 'batchCheck') {
      const r = v as { results: ReadonlyMap<string, unknown> };
      return { ...r, results: errorsToWire(r.results) };
    }
    if (op === 'checkIds') {
      const input = args[0] as WiredCheckIds;
      const errors = this.checkIdsErrors.get(input) ?? new Map<number, AppError>();
      this.checkIdsErrors.delete(input);
      return { result: v, outcomes: input.outcomes, errors: errorsToWire(errors) };
    }
    return v;
  }

  private checkIdsInput(w: WiredCheckIds): CheckIdsInput {
    const table = this.tables.get(w.tableId);
    if (!table) throw new Error('unknown string table');
    const { tableId: _, errors, ...rest } = w;
    const input: CheckIdsInput = { ...rest, table, errors: errorsFromWire(errors) as Map<number, AppError> };
    this.checkIdsErrors.set(w, input.errors);
    return input;
  }

  private async open(m: OpenMsg): Promise<void> {
    const pump: Pump = { abort: new AbortController(), credit: STREAM_WINDOW, wake: undefined, iterator: undefined };
    this.streams.set(m.id, pump);
    try {
      if (!STREAM_OPS.has(m.op)) throw new Error(`unknown operation ${m.op}`);
      let iterable: AsyncIterable<unknown>;
      if (m.op === 'impact') {
        let s: Awaited<ReturnType<Latch['impact']>>;
        try {
          s = await this.latch.impact(m.args[0] as never, pump.abort.signal);
        } catch (err) {
          // Before the first line: the call itself fails, as `impact` rejects.
          this.streams.delete(m.id);
          return this.send({ t: 'err', id: m.id, e: toWire(err) });
        }
        this.send({ t: 'ok', id: m.id, v: s.baseModelId });
        iterable = s.lines;
      } else {
        const fn = (this.latch as unknown as Record<string, (...a: unknown[]) => AsyncIterable<unknown>>)[m.op];
        iterable = (fn as (...a: unknown[]) => AsyncIterable<unknown>).call(this.latch, m.args[0], pump.abort.signal);
      }
      const it = (pump.iterator = iterable[Symbol.asyncIterator]());
      for (;;) {
        if (pump.credit <= 0) await new Promise<void>((r) => (pump.wake = r));
        if (!this.streams.has(m.id)) return;
        if (pump.credit <= 0) continue;
        const r = await it.next();
        if (!this.streams.has(m.id)) return;
        if (r.done) break;
        pump.credit--;
        this.send({ t: 'items', id: m.id, vs: [r.value], end: false });
      }
      this.send({ t: 'items', id: m.id, vs: [], end: true });
    } catch (err) {
      if (this.streams.has(m.id)) this.send({ t: 'items', id: m.id, vs: [], end: true, e: toWire(err) });
    } finally {
      this.streams.delete(m.id);
    }
  }

  private ack(id: number, n: number): void {
    const pump = this.streams.get(id);
    if (!pump) return;
    pump.credit += n;
    const wake = pump.wake;
    pump.wake = undefined;
    wake?.();
  }

  private cancel(id: number): void {
    const pump = this.streams.get(id);
    if (!pump) return;
    this.streams.delete(id);
    pump.abort.abort();
    pump.wake?.();
    void pump.iterator?.return?.().catch(() => undefined);
  }
}

/** checkIds' input as an HTTP thread sends it: the table by its id (its strings were sent before). */
export interface WiredCheckIds extends Omit<CheckIdsInput, 'table' | 'errors'> {
  readonly tableId: number;
  readonly errors: ReadonlyMap<number, unknown>;
}
