// Request bodies on uWS: collected up to a size limit (never buffered past it, D9), decoded as JSON
// (strict UTF-8) or msgpack, `{}` for an empty body.

import { isUtf8 } from 'node:buffer';
import { AppError } from '../errors.js';
import { decodeMsgpack } from './codec.js';
import type { HttpResponse } from './uws.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export function tooLarge(limit: number): AppError {
  return new AppError('validation_error', `request body exceeds the limit of ${limit} bytes`);
}

/**
 * Calls `onBody` once with the whole body, or with `undefined` as soon as the body (announced or
 * received) exceeds `limit` (one callback for both: it is allocated per request). The bytes may be
 * a view of uWS's own buffer: they are valid only until `onBody` returns, so it must decode them
 * synchronously.
 */
export function readBody(res: HttpResponse, announced: number, limit: number, onBody: (bytes: Buffer | undefined) => void): void {
  if (announced > limit) return onBody(undefined);
  let parts: Buffer[] | undefined;
  let size = 0;
  let stopped = false;
  res.onData((chunk, isLast) => {
    if (stopped) return;
    size += chunk.byteLength;
    if (size > limit) {
      stopped = true;
      return onBody(undefined);
    }
    // The common case, one chunk: no copy, decoded before uWS reuses the memory.
    if (isLast && parts === undefined) return onBody(Buffer.from(chunk));
    (parts ??= []).push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) onBody(Buffer.concat(parts, size));
  });
}

/** The request body as an untyped value; throws validation_error on malformed input. */
export function decodeBody(bytes: Buffer, msgpack: boolean): unknown {
  if (bytes.length === 0) return {};
  if (msgpack) {
    try {
      return decodeMsgpack(bytes);
    } catch (err) {
      throw new AppError('validation_error', `malformed msgpack: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!isUtf8(bytes)) throw new AppError('validation_error', 'request body is not valid UTF-8');
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    throw new AppError('validation_error', /end of JSON input|Unterminated/.test(text) ? 'malformed JSON' : text);
  }
}
