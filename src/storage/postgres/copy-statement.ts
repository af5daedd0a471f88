// The part latch's hand-driven COPY statements share (copy-in.ts, copy-out.ts): a node-postgres
// Submittable that sends one statement with the simple query protocol and settles once, when the
// backend is ready for the next query or at the first error. node-postgres calls the handlers
// below by name with the backend's messages; a subclass handles the Copy* messages it expects.

import type pg from 'pg';

export abstract class CopyStatement<T> implements pg.Submittable {
  private settled = false;

  constructor(
    private readonly sql: string,
    private readonly resolve: (value: T) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  /** What the statement resolves to once it completed. */
  protected abstract result(): T;

  submit(connection: pg.Connection): void {
    connection.query(this.sql);
  }

  /** Once per statement: after CommandComplete, or after an error (then `handleError` ran first). */
  handleReadyForQuery(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(this.result());
  }

  /** A backend error (the connection stays usable) or a lost connection. */
  handleError(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }

  /** A COPY … FROM STDIN where the subclass sends no rows: refused (the backend then ends it). */
  handleCopyInResponse(_connection: pg.Connection): void {
    this.handleError(new Error('latch: COPY FROM is not supported here'));
  }

  handleCopyData(_msg: { chunk: Buffer }): void {}
  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
}
