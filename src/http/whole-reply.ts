// Whole replies (a body with its Content-Length) whose body may not fit uWS's 16 KB cork buffer
// beside the headers: written so that no write of the body makes uWS flush corked bytes.
//
// Why: uWS (v20.30, and upstream's AsyncSocket as of this writing) copies each write into the
// cork buffer when it fits. A write that does not fit makes it flush the cork buffer first, and
// when the socket takes only part of that flush it returns without writing the new bytes at all;
// HttpResponse::internalEnd then counts none of the body written and leaves the response pending,
// and `end` reports nothing. That happens when uWS's own backpressure buffer is empty while the
// kernel's send buffer has less room left than the corked headers (a reply that filled it just
// before): the client gets the headers and a Content-Length whose body never comes
// (bench/http/uws-end.ts reproduces it on bare uWS; test/http/whole-replies.test.ts through latch).
//
// So the headers and the Content-Length go out in a cork of their own (`tryEnd` of no bytes with
// the body's size writes them and nothing else), and the body is ended in the next cork, which
// starts empty: uWS then has nothing corked to flush, and writes the body or appends what the
// socket refuses to its backpressure buffer, where nothing is lost. Both corks run at once, so the
// reply is finished before the handler returns, as with one `end`.
// Inside a uWS callback that corked the socket already (a request's own handler or body, and the
// microtasks after it: a reply answered at once), both run in that cork as one `end` does, and the
// window stays for the first such reply of that read: uWS.js has no call that flushes its cork.
// Writing the body in `tryEnd` slices over several turns would avoid it, but uWS allows pipelining
// only of answers written at once: it closes a connection on which a request arrives while an
// earlier answer is pending (docs/reference/http-api.md §1.1; bench/http/uws-end.ts `sliced`: 51
// connections of 51 closed), so the body is written in the same turn as its headers.

import type { HttpResponse } from './uws.js';

/**
 * A body of more bytes than this is written apart from its headers: a smaller one and its headers
 * fit an empty cork buffer (the headers stay under 8 KB: uWS refuses longer request headers, the
 * only ones a reply echoes), so one `end` never makes uWS flush anything on the way.
 */
export const CORKED_BODY_BYTES = 8 * 1024;

/** The header block's terminator is written by `tryEnd`; this is the body it writes: none. */
const NO_BYTES = new ArrayBuffer(0);

/**
 * The size in bytes of `payload` when it is larger than CORKED_BODY_BYTES, else undefined (written
 * with one `end`). A string is measured only when it may be that large (at most 3 UTF-8 bytes per
 * UTF-16 unit, so the short replies of the hot paths cost one comparison), and without encoding
 * it: uWS encodes it once, when it writes it.
 */
export function largeBodySize(payload: string | Uint8Array | ArrayBuffer): number | undefined {
  if (typeof payload !== 'string') return payload.byteLength > CORKED_BODY_BYTES ? payload.byteLength : undefined;
  if (payload.length * 3 <= CORKED_BODY_BYTES) return undefined;
  const size = Buffer.byteLength(payload, 'utf8');
  return size > CORKED_BODY_BYTES ? size : undefined;
}

/**
 * Ends `res` with `body` of `size` bytes (from `largeBodySize`): `head` (the status and headers)
 * and the Content-Length in one cork, the body in the next. Not for a reply that closes the
 * connection: uWS writes its `Connection: close` header at the `end` call, which here is after the
 * header block.
 */
export function endLarge(
  res: HttpResponse,
  head: () => void,
  body: string | Uint8Array | ArrayBuffer,
  size: number,
): void {
  res.cork(() => {
    head();
    res.tryEnd(NO_BYTES, size);
  });
  res.cork(() => res.end(body));
}

/**
 * A whole reply: `head` and `payload` in one cork when the payload is small (or the connection
 * closes after it), else as `endLarge` does.
 */
export function endWhole(res: HttpResponse, head: () => void, payload: string | Uint8Array, close = false): void {
  const size = close ? undefined : largeBodySize(payload);
  if (size !== undefined) return endLarge(res, head, payload, size);
  res.cork(() => {
    head();
    res.end(payload, close);
  });
}
