// The Check paths of the differential test that answer many checks at once: the worker pool (from
// strings and from pre-interned records), the service's `checkIds` and the msgpack channel's
// `check-ids` against a real server. Each runs the production code for that path; every answer is
// compared with the oracle on exactly the data that path holds.

import type { JsonObject, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { ChannelError, LatchChannelClient } from '../../src/client/index.js';
import { CHECK_ALLOWED, CHECK_DENIED, CHECK_ERROR } from '../../src/engine/contract.js';
import { validateCheckKey } from '../../src/engine/commands/validate-request.js';
import {
  createWalkerChecker,
  type CheckOutcome,
  type WalkerChecker,
} from '../../src/engine/evaluation/walker/checker.js';
import { programFor } from '../../src/engine/evaluation/walker/program.js';
import { encodeQuery } from '../../src/engine/evaluation/walker/request.js';
import { QUERY_WORDS } from '../../src/abi.js';
import type { IndexSnapshot } from '../../src/index/store-index.js';
import { startServer, type RunningServer } from '../../src/main.js';
import { findTupleProblem } from '../../src/model/tuple-validation.js';
import type { AuthorizationModelInput } from '../../src/domain/types.js';
import type { CompiledModel } from '../../src/model/types.js';
import { compile } from '../reference/model.js';
import { oracleCheck, type O } from '../oracle/oracle.js';

/** What the bulk paths need of a world: the models (as written, then as queried) and the data. */
export interface BulkWorld {
  /** The model the stored tuples were written under (the same as `json` unless it evolved). */
  readonly origin: AuthorizationModelInput;
  readonly json: AuthorizationModelInput;
  readonly model: CompiledModel;
  readonly tuples: readonly TupleKey[];
  readonly contextual: readonly TupleKey[];
  readonly depth: number;
}

export interface BulkCheck {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
  readonly context: JsonObject | undefined;
}

/** Agreement with the oracle as the other non-reference paths use it (any error matches any error). */
export const agrees = (a: O, b: O): boolean =>
  a === b || (a === 'F' && b === 'C') || (a === 'C' && b === 'F') || (typeof a === 'number' && typeof b === 'number');

const fromOutcome = (o: CheckOutcome): O | string =>
  'error' in o ? errorO(o.error.numeric, o.error.code) : o.allowed ? 'T' : 'F';
const errorO = (numeric: number, code: string): O | string =>
  numeric === 2000 || numeric === 2002 ? numeric : `error ${code}`;
const channelO = (e: ChannelError): O | string =>
  e.code === 'validation_error'
    ? 2000
    : e.code === 'authorization_model_resolution_too_complex'
      ? 2002
      : `error ${e.code}`;

/**
 * Owns the pool checkers (one per depth limit, every batch on the pool) and the servers (one per
 * depth limit, with the msgpack client) for one test run.
 */
export class BulkPaths {
  private readonly pools = new Map<number, WalkerChecker>();
  private readonly servers = new Map<number, Promise<{ server: RunningServer; client: LatchChannelClient }>>();
  /** Compared answers per path (printed and checked by the test). */
  readonly counts = new Map<string, number>();

  private pool(depth: number): WalkerChecker {
    let p = this.pools.get(depth);
    if (!p) {
      p = createWalkerChecker({ workers: 1, resolveDepth: depth, poolThreshold: 1 });
      this.pools.set(depth, p);
    }
    return p;
  }

  private server(depth: number): Promise<{ server: RunningServer; client: LatchChannelClient }> {
    let s = this.servers.get(depth);
    if (!s) {
      s = (async () => {
        const server = await startServer({
          host: '127.0.0.1',
          port: 0,
          datastore: 'memory',
          engine: { resolveDepth: depth, workers: 0 },
          // LATCH_DIFF_HTTP_THREADS=1: the channel served by an HTTP worker thread (--http-threads).
          ...(process.env.LATCH_DIFF_HTTP_THREADS === '1' ? { httpThreads: 1, mainThreadServes: false } : {}),
        });
        const client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
        return { server, client };
      })();
      this.servers.set(depth, s);
    }
    return s;
  }

  private count(path: string): void {
    this.counts.set(path, (this.counts.get(path) ?? 0) + 1);
  }

  /** Runs every bulk path over `checks`; the first disagreement with the oracle, or undefined. */
  async compare(w: BulkWorld, snapshot: IndexSnapshot, checks: readonly BulkCheck[]): Promise<string | undefined> {
    if (checks.length === 0) return undefined;
    return (
      (await this.poolStrings(w, snapshot, checks)) ??
      (await this.poolIds(w, snapshot, checks)) ??
      (await this.service(w, checks))
    );
  }

  private mismatch(path: string, c: BulkCheck, got: O | string, want: O): string | undefined {
    this.count(path);
    if (typeof got !== 'string' || got === 'T' || got === 'F' || got === 'C') {
      if (agrees(got as O, want)) return undefined;
    }
    return `${path}: Check(${c.user}, ${c.relation}, ${c.object}) with context ${JSON.stringify(c.context)} = ${got}, oracle ${want}`;
  }

  private want(w: BulkWorld, tuples: readonly TupleKey[], contextual: readonly TupleKey[], c: BulkCheck): O {
    return oracleCheck(
      { model: w.model, tuples: [...contextual, ...tuples], context: c.context, depthLimit: w.depth },
      c.object,
      c.relation,
      c.user,
    );
  }

  /** The pool from request strings (`WalkerChecker.check`; conditions come back to this thread). */
  private async poolStrings(
    w: BulkWorld,
    snapshot: IndexSnapshot,
    checks: readonly BulkCheck[],
  ): Promise<string | undefined> {
    const items = checks.map((c) => ({
      object: c.object,
      relation: c.relation,
      user: c.user,
      contextualTuples: w.contextual,
      ...(c.context ? { context: c.context } : {}),
    }));
    const out = await this.pool(w.depth).check(snapshot, w.model, items);
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i] as BulkCheck;
      const bad = this.mismatch(
        'pool',
        c,
        fromOutcome(out[i] as CheckOutcome),
        this.want(w, w.tuples, w.contextual, c),
      );
      if (bad) return bad;
    }
    return undefined;
  }

  /** The pool from pre-interned records (`WalkerChecker.checkIds`), one run per request context. */
  private async poolIds(
    w: BulkWorld,
    snapshot: IndexSnapshot,
    checks: readonly BulkCheck[],
  ): Promise<string | undefined> {
    if (w.contextual.length > 0) return undefined; // records carry no contextual tuples
    const program = programFor(w.model, snapshot.dict);
    for (const group of byContext(checks)) {
      // A record needs the object's node id; objects the snapshot never saw take the string path.
      const encodable = group.filter((c) => snapshot.nodeId(c.object) !== undefined);
      if (encodable.length === 0) continue;
      const queries = new Uint32Array(encodable.length * QUERY_WORDS);
      encodable.forEach((c, i) =>
        encodeQuery(snapshot, program, c.object, c.relation, c.user, queries, i * QUERY_WORDS),
      );
      const out = await this.pool(w.depth).checkIds(snapshot, w.model, queries, encodable[0]?.context);
      for (let i = 0; i < encodable.length; i++) {
        const c = encodable[i] as BulkCheck;
        const bad = this.mismatch('pool-ids', c, fromOutcome(out[i] as CheckOutcome), this.want(w, w.tuples, [], c));
        if (bad) return bad;
      }
    }
    return undefined;
  }

  /**
   * The service's `checkIds` and the msgpack channel's `check-ids` on a store holding the world:
   * the origin model, the tuples it accepts as writes, then the evolved model (stale tuples stay).
   */
  private async service(w: BulkWorld, checks: readonly BulkCheck[]): Promise<string | undefined> {
    if (w.contextual.length > 0) return undefined; // the id forms carry no contextual tuples
    const { server, client } = await this.server(w.depth);
    const latch = server.latch;
    const store = (await latch.createStore('differential')).id;
    const origin = compile(w.origin);
    const written = w.tuples.filter((t) => !findTupleProblem(origin, t, 'write'));
    await latch.writeModel(store, w.origin);
    if (written.length > 0)
      await latch.write({ storeId: store, writes: written, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    if (w.json !== w.origin) await latch.writeModel(store, w.json);
    try {
      for (const group of byContext(checks)) {
        const wants = group.map((c) => (invalidKey(w.model, c) ? 2000 : this.want(w, written, [], c)));
        const strings: string[] = [];
        const triples = new Uint32Array(group.length * 3);
        const wire = new Uint32Array(group.length * 3);
        group.forEach((c, i) => {
          [c.object, c.relation, c.user].forEach((s, k) => {
            let at = strings.indexOf(s);
            if (at < 0) at = strings.push(s) - 1;
            triples[i * 3 + k] = at;
            wire[i * 3 + k] = client.intern(s);
          });
        });
        const context = group[0]?.context;
        const outcomes = new Uint8Array(group.length);
        const errors = new Map<number, AppError>();
        await latch.checkIds({
          storeId: store,
          consistency: 'MINIMIZE_LATENCY',
          context,
          table: { strings },
          triples,
          outcomes,
          errors,
        });
        const viaChannel = await client.checkIds(store, wire, context ? { context } : {});
        for (let i = 0; i < group.length; i++) {
          const c = group[i] as BulkCheck;
          const want = wants[i] as O;
          const err = errors.get(i);
          const got =
            outcomes[i] === CHECK_ERROR
              ? err
                ? errorO(err.numeric, err.code)
                : 'error without an AppError'
              : outcomes[i] === CHECK_ALLOWED
                ? 'T'
                : 'F';
          const bad = this.mismatch('checkIds', c, got, want);
          if (bad) return `${bad}; stored ${JSON.stringify(written)}`;
          const r = viaChannel.results[i];
          const cerr = viaChannel.errors.get(i);
          const gotWire =
            r === CHECK_ERROR
              ? cerr
                ? channelO(cerr)
                : 'error without a message'
              : r === CHECK_ALLOWED
                ? 'T'
                : r === CHECK_DENIED
                  ? 'F'
                  : `byte ${r}`;
          const badWire = this.mismatch('msgpack check-ids', c, gotWire, want);
          if (badWire) return `${badWire}; stored ${JSON.stringify(written)}`;
        }
      }
      return undefined;
    } finally {
      await latch.deleteStore(store);
    }
  }

  async close(): Promise<void> {
    for (const p of this.pools.values()) await p.close();
    for (const s of this.servers.values()) {
      const { server, client } = await s;
      await client.close();
      await server.close();
    }
  }
}

/** A Check key the service rejects before evaluating (2000 on every transport, §5.1 step 3). */
function invalidKey(model: CompiledModel, c: BulkCheck): boolean {
  try {
    validateCheckKey(model, c);
    return false;
  } catch (e) {
    if (e instanceof AppError) return true;
    throw e;
  }
}

/** Checks grouped by request context (the id forms take one context per call), order kept within a group. */
function byContext(checks: readonly BulkCheck[]): BulkCheck[][] {
  const groups = new Map<string, BulkCheck[]>();
  for (const c of checks) {
    const k = JSON.stringify(c.context ?? null);
    const g = groups.get(k) ?? [];
    g.push(c);
    groups.set(k, g);
  }
  return [...groups.values()];
}
