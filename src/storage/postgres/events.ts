// Commit events across nodes: every mutating transaction sends one NOTIFY on the channel
// `latch_events` (delivered by PostgreSQL only after the commit, never for a rollback, in commit
// order), and each storage object keeps one dedicated connection that LISTENs and reconnects by
// itself with backoff. Payload (JSON, under NOTIFY's 8000 bytes): {n: node tag, k: kind, s: store
// id, r: revision | m: model id | d: deleted}; a tuple write's may add c: its changes, each
// [deleted, object, relation, user, condition JSON | null, expires ms | null] as stored (sent by
// latch_write, migrations.ts, for writes of at most 32 changes). A node delivers its own commits
// at once after they commit (not through NOTIFY), and skips its own notifications so none is
// reported twice.

import pg from 'pg';
import type { TupleKey } from '../../domain/types.js';
import type { RevisionChanges, StorageEvent } from '../types.js';
import { toKey } from './tuples.js';

export const CHANNEL = 'latch_events';

interface Payload {
  readonly n: string;
  readonly k: 't' | 'm' | 's';
  readonly s: string;
  readonly r?: number;
  readonly m?: string;
  readonly d?: boolean;
  readonly c?: unknown;
}

const isChange = (x: unknown): x is [boolean, string, string, string, string | null, number | null] =>
  Array.isArray(x) &&
  x.length === 6 &&
  typeof x[0] === 'boolean' &&
  typeof x[1] === 'string' &&
  typeof x[2] === 'string' &&
  typeof x[3] === 'string' &&
  (x[4] === null || typeof x[4] === 'string') &&
  (x[5] === null || typeof x[5] === 'number');

/** The inline changes of a payload; undefined when absent or not in latch's shape (the log is read instead). */
function changesOf(c: unknown): RevisionChanges | undefined {
  if (!Array.isArray(c) || !c.every(isChange)) return undefined;
  const deleted: TupleKey[] = [];
  const written: TupleKey[] = [];
  try {
    // a delete's condition is not part of the change (latch_record_revision sends null there)
    for (const [del, o, r, u, cnd, e] of c) (del ? deleted : written).push(toKey([o, r, u, del ? null : cnd, e]));
  } catch {
    return undefined; // a condition that is not JSON: not latch's
  }
  return { deleted, written };
}

export function encodeEvent(node: string, e: StorageEvent): string {
  const p: Payload =
    e.kind === 'tuples'
      ? { n: node, k: 't', s: e.storeId, r: e.revision }
      : e.kind === 'model'
        ? { n: node, k: 'm', s: e.storeId, m: e.modelId }
        : { n: node, k: 's', s: e.storeId, d: e.deleted };
  return JSON.stringify(p);
}

/** The event and the node that sent it; undefined for a payload latch did not make. */
function decodeEvent(payload: string): { node: string; event: StorageEvent } | undefined {
  let p: Partial<Payload>;
  try {
    p = JSON.parse(payload) as Partial<Payload>;
  } catch {
    return undefined;
  }
  if (typeof p.n !== 'string' || typeof p.s !== 'string') return undefined;
  if (p.k === 't' && typeof p.r === 'number') {
    const changes = p.c === undefined ? undefined : changesOf(p.c);
    const event = { kind: 'tuples', storeId: p.s, revision: p.r } as const;
    return { node: p.n, event: changes ? { ...event, changes } : event };
  }
  if (p.k === 'm' && typeof p.m === 'string')
    return { node: p.n, event: { kind: 'model', storeId: p.s, modelId: p.m } };
  if (p.k === 's' && typeof p.d === 'boolean')
    return { node: p.n, event: { kind: 'store', storeId: p.s, deleted: p.d } };
  return undefined;
}

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;

/** One LISTEN connection; reconnects after any failure until `close`. */
export class Listener {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private backoff = MIN_BACKOFF_MS;
  private closed = false;
  /** Connections made so far (tests and metrics: 1 + reconnects). */
  connects = 0;
  private connected = false;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly connectionString: string,
    /** This node's tag: its own notifications are skipped (delivered locally already). */
    private readonly node: string,
    private readonly deliver: (event: StorageEvent) => void,
    private readonly onError: (message: string) => void,
  ) {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.connectionString, application_name: 'latch-listen' });
    this.client = client;
    let failed = false;
    const fail = (err: Error | undefined): void => {
      if (failed) return;
      failed = true;
      this.connected = false;
      if (!this.closed)
        this.onError(`postgres: event listener lost its connection${err ? `: ${err.message}` : ''}; reconnecting`);
      client.end().catch(() => undefined);
      this.retry();
    };
    client.on('error', fail);
    client.on('end', () => fail(undefined));
    client.on('notification', (msg) => this.receive(msg.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      if (failed) return;
      this.connects++;
      this.backoff = MIN_BACKOFF_MS;
      this.connected = true;
      for (const w of this.waiters.splice(0)) w();
    } catch (err) {
      fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Resolves once LISTEN is in place on a live connection (at once when it is now). */
  whenConnected(): Promise<void> {
    if (this.connected || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    const wait = this.backoff;
    this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, wait);
    this.timer.unref();
  }

  private receive(payload: string | undefined): void {
    const got = payload === undefined ? undefined : decodeEvent(payload);
    if (got && got.node !== this.node) this.deliver(got.event);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.client?.end().catch(() => undefined);
  }
}
