// The messages between an HTTP thread and the main thread (`--http-threads`): the engine calls an
// HTTP thread forwards, their answers, and the streams' items with their credit. Errors cross as
// their catalog code and message, so an AppError thrown on the main thread is the same AppError
// (code, status, body) on the HTTP thread; anything else crosses as a plain Error (a 500 either way).

import { AppError, isErrorCode } from '../../errors.js';

/** Items a stream may send ahead of the HTTP thread's acknowledgements (the per-stream buffer bound). */
export const STREAM_WINDOW = 256;

/** A call of a `Latch` method that answers with one value. */
export interface CallMsg {
  readonly t: 'call';
  readonly id: number;
  readonly op: string;
  readonly args: readonly unknown[];
}
/** Opens a stream (watch, expansions, streamedListObjects, impact's lines). */
export interface OpenMsg {
  readonly t: 'open';
  readonly id: number;
  readonly op: string;
  readonly args: readonly unknown[];
}
/** The HTTP thread consumed `n` items of stream `id`: the main thread may send `n` more. */
export interface AckMsg {
  readonly t: 'ack';
  readonly id: number;
  readonly n: number;
}
/** The HTTP thread's consumer stopped (aborted, or returned early). */
export interface CancelMsg {
  readonly t: 'cancel';
  readonly id: number;
}
/** New strings of a channel connection's table (`checkIds`), appended from index `from`. */
export interface TableMsg {
  readonly t: 'table';
  readonly table: number;
  readonly from: number;
  readonly strings: readonly string[];
}
/** A channel connection's table is gone: the main thread forgets its copy. */
export interface DropTableMsg {
  readonly t: 'drop-table';
  readonly table: number;
}
export type ToMain = CallMsg | OpenMsg | AckMsg | CancelMsg | TableMsg | DropTableMsg;

export interface WireError {
  readonly code?: string | undefined;
  readonly message: string;
  /** The AppError's extra wire fields (write_precondition_failed: `precondition_index`). */
  readonly fields?: Readonly<Record<string, number | string>> | undefined;
}
export interface OkMsg {
  readonly t: 'ok';
  readonly id: number;
  readonly v: unknown;
}
export interface ErrMsg {
  readonly t: 'err';
  readonly id: number;
  readonly e: WireError;
}
/** Items of stream `id`; `end` after the last one, `e` when it failed after them. */
export interface ItemsMsg {
  readonly t: 'items';
  readonly id: number;
  readonly vs: readonly unknown[];
  readonly end: boolean;
  readonly e?: WireError | undefined;
}
/** The engine's figures, pushed for `stats()` (a metrics scrape on an HTTP thread). */
export interface StatsMsg {
  readonly t: 'stats';
  readonly v: unknown;
}
/** The main thread asks the HTTP thread to stop accepting and finish within `graceMs`. */
export interface CloseMsg {
  readonly t: 'close';
  readonly graceMs: number;
}
export type ToThread = OkMsg | ErrMsg | ItemsMsg | StatsMsg | CloseMsg;

export function toWire(err: unknown): WireError {
  if (err instanceof AppError) return { code: err.code, message: err.message, fields: err.fields };
  return { message: err instanceof Error ? err.message : String(err) };
}

export function fromWire(e: WireError): Error {
  return e.code !== undefined && isErrorCode(e.code)
    ? new AppError(e.code, e.message, e.fields && { fields: e.fields })
    : new Error(e.message);
}

/** A value with AppErrors inside (BatchCheck outcomes, checkIds errors), made cloneable: each error as its wire form. */
export function errorsToWire<K>(m: ReadonlyMap<K, unknown>): Map<K, unknown> {
  const out = new Map<K, unknown>();
  for (const [k, v] of m) {
    if (v instanceof AppError) out.set(k, { __error: toWire(v) });
    else if (typeof v === 'object' && v !== null && 'error' in v && v.error instanceof AppError)
      out.set(k, { error: { __error: toWire(v.error) } });
    else out.set(k, v);
  }
  return out;
}

function isWired(v: unknown): v is { __error: WireError } {
  return typeof v === 'object' && v !== null && '__error' in v;
}

/** The inverse of `errorsToWire`. */
export function errorsFromWire<K>(m: ReadonlyMap<K, unknown>): Map<K, unknown> {
  const out = new Map<K, unknown>();
  for (const [k, v] of m) {
    if (isWired(v)) out.set(k, fromWire(v.__error));
    else if (typeof v === 'object' && v !== null && 'error' in v && isWired(v.error))
      out.set(k, { error: fromWire(v.error.__error) });
    else out.set(k, v);
  }
  return out;
}
