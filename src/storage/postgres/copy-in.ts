// `COPY … FROM STDIN` on a node-postgres client, driven by hand: node-postgres has the protocol's
// messages (Connection.sendCopyFromChunk / endCopyFrom / sendCopyFail) but no API for them, so a
// Submittable sends the statement, then, on the backend's CopyInResponse, the given bytes as
// CopyData messages and CopyDone. Rows travel in COPY's text format (`copyText` below): one
// line per row, fields split by a tab, `\N` for NULL. The statement goes out with the simple
// query protocol (it takes no parameters).

import type pg from 'pg';
import { CopyStatement } from './copy-statement.js';

/** Bytes per CopyData message: the server takes any size; this keeps each write of the socket small. */
const MESSAGE_BYTES = 1 << 20;

/**
 * Sends `data` (COPY text rows, whole rows or not: the server reads one stream) as the input of
 * `sql`, a `COPY … FROM STDIN` statement, on client `c`.
 */
export function copyIn(c: pg.ClientBase, sql: string, data: readonly Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    c.query(new CopyIn(sql, data, resolve, reject));
  });
}

/** The statement: on the backend's CopyInResponse, every row, then CopyDone. */
class CopyIn extends CopyStatement<void> {
  constructor(
    sql: string,
    private readonly data: readonly Buffer[],
    resolve: () => void,
    reject: (err: unknown) => void,
  ) {
    super(sql, resolve, reject);
  }

  protected result(): void {}

  /** The server is ready for the rows: all of them, then CopyDone (it answers when it has read them). */
  override handleCopyInResponse(connection: pg.Connection): void {
    const c = connection as unknown as { sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void };
    for (const b of this.data)
      for (let at = 0; at < b.byteLength; at += MESSAGE_BYTES)
        c.sendCopyFromChunk(b.subarray(at, Math.min(b.byteLength, at + MESSAGE_BYTES)));
    c.endCopyFrom();
  }
}

const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * One field in COPY's text format: a backslash, tab, newline or carriage return escaped (the
 * only characters the format gives a meaning), everything else as it is; null is `\N`.
 */
export function copyText(v: string | null): string {
  if (v === null) return '\\N';
  return SPECIAL.test(v) ? v.replace(SPECIAL_ALL, (ch) => ESCAPES[ch] as string) : v;
}
