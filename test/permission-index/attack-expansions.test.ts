// Regression tests for the attack on ReadExpansions' initial set: a stream opened without `from`
// used to spread the whole materialised set into its own array, so many streams that never read
// exhausted the heap (200 such streams over 200k triples killed a server). A stream now reads the
// set through a snapshot of the live maps: it holds an iterator, and writes that land meanwhile
// change neither what it sends nor what other streams send.

import { connect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import type { ExpansionStreamEvent } from '../../src/engine/contract.js';
import { dslToModel } from '../../src/model/dsl.js';
import { start } from '../http/helpers.js';
import { active, fixture, tripleKey, type Fixture } from './harness.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const DSL = `model
  schema 1.1
type user
type doc
  relations
    define viewer: [user]
`;

let f: Fixture | undefined;
afterEach(async () => {
  await f?.latch.close();
  f = undefined;
});

const write = (fx: Fixture, writes: TupleKey[], deletes: TupleKey[] = []) =>
  fx.latch.write({ storeId: fx.storeId, writes, deletes, onDuplicate: 'error', onMissing: 'error' });

/** The HTTP attack: STREAMS consumers of an index over TRIPLES triples, each until WANT_BYTES arrived. */
const STREAMS = 8;
const TRIPLES = 20_000;
const WANT_BYTES = 1_000_000;
/**
 * The most bytes one socket may receive in one event-loop turn: 16 chunks of 4 KB. Measured at load
 * 22: 8,640 (two chunks with their framing). With a line per write and no yield, the old stream:
 * 2,097,152 (libuv's most per read event; 9 turns in all, a 31 s stall at load 30).
 */
const MOST_PER_TURN = 64 * 1024;

const grant = (i: number): TupleKey => ({ object: `doc:${i}`, relation: 'viewer', user: `user:${i % 997}` });

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function indexed(triples: number): Promise<{ fx: Fixture; indexId: string }> {
  const fx = await fixture(DSL);
  for (let d = 0; d < triples; d += 100)
    await write(
      fx,
      Array.from({ length: Math.min(100, triples - d) }, (_, i) => grant(d + i)),
    );
  const info = await fx.latch.createPermissionIndex({
    storeId: fx.storeId,
    name: 'v',
    relations: [{ object_type: 'doc', relation: 'viewer' }],
  });
  await active(fx, info.record.id);
  return { fx, indexId: info.record.id };
}

function open(fx: Fixture, indexId: string): AsyncIterator<ExpansionStreamEvent> {
  const input = { storeId: fx.storeId, indexId, modelId: fx.modelId, heartbeatMs: 60_000, lifetimeMs: 600_000 };
  return fx.latch.expansions(input)[Symbol.asyncIterator]();
}

/** Pulls until the first initial-set entry: the stream is then open and holds its snapshot. */
async function started(it: AsyncIterator<ExpansionStreamEvent>): Promise<ExpansionStreamEvent> {
  for (;;) {
    const next = await it.next();
    if (next.done) throw new Error('stream ended before its initial set');
    if (next.value.kind === 'expansion') return next.value;
  }
}

describe('ReadExpansions initial set under attack', () => {
  it('attack: 200 non-reading consumers of a 20k-triple index hold no copy of the set', async () => {
    const { fx, indexId } = await indexed(20_000);
    f = fx;
    const base = heapAfterGc();
    const streams = Array.from({ length: 200 }, () => open(fx, indexId));
    for (const s of streams) await started(s);
    const held = heapAfterGc() - base;
    // A copy of the set costs ≈ 1.1 MB per stream here (≈ 220 MB for 200); an iterator costs a
    // few hundred bytes. The bound leaves room for the allocator's noise, not for one copy each.
    expect(held).toBeLessThan(16 * 1024 * 1024);
    for (const s of streams) await s.return?.();
    expect(heapAfterGc() - base).toBeLessThan(8 * 1024 * 1024);
  }, 120_000);

  it('attack: writes racing an open initial set change neither it nor the events after it', async () => {
    const { fx, indexId } = await indexed(3_000);
    f = fx;
    const expectedAtOpen = new Set(
      Array.from({ length: 3_000 }, (_, i) => tripleKey(`user:${i % 997}`, 'viewer', `doc:${i}`)),
    );
    const slow = open(fx, indexId);
    const idle = open(fx, indexId);
    const seen = new Set<string>();
    const first = await started(slow);
    await started(idle);
    if (first.kind === 'expansion') seen.add(tripleKey(first.event.user, first.event.relation, first.event.object));
    // While both hold their snapshot: delete half the grants, re-grant some of them, add new ones.
    const deleted = Array.from({ length: 1_500 }, (_, i) => grant(i * 2));
    for (let i = 0; i < deleted.length; i += 100) await write(fx, [], deleted.slice(i, i + 100));
    await write(
      fx,
      Array.from({ length: 100 }, (_, i) => grant(i * 4)),
    );
    await write(
      fx,
      Array.from({ length: 100 }, (_, i) => grant(10_000 + i)),
    );
    let freshness: number | undefined;
    const problems: string[] = [];
    for (;;) {
      const next = await slow.next();
      if (next.done) throw new Error('stream ended');
      const e = next.value;
      if (e.kind === 'freshness') {
        if (freshness === undefined) {
          freshness = e.revision;
          expect(seen).toEqual(expectedAtOpen); // exactly the set at the stream's revision
        } else if (e.revision >= freshness + deleted.length / 100 + 2) break;
      }
      if (e.kind !== 'expansion') continue;
      const k = tripleKey(e.event.user, e.event.relation, e.event.object);
      if (e.event.operation === 'INSERT') {
        if (seen.has(k)) problems.push(`INSERT of present ${k}`);
        seen.add(k);
      } else if (!seen.delete(k)) problems.push(`DELETE of absent ${k}`);
    }
    expect(problems).toEqual([]);
    const now = new Set<string>();
    for (let i = 0; i < 3_000; i++)
      if (i % 2 === 1 || (i % 4 === 0 && i < 400)) now.add(tripleKey(`user:${i % 997}`, 'viewer', `doc:${i}`));
    for (let i = 0; i < 100; i++) now.add(tripleKey(`user:${(10_000 + i) % 997}`, 'viewer', `doc:${10_000 + i}`));
    expect(seen).toEqual(now);
    // The idle stream still sends the set as it was when it opened.
    const idleSeen = new Set<string>();
    for (;;) {
      const next = await idle.next();
      if (next.done || next.value.kind === 'freshness') break;
      if (next.value.kind === 'expansion')
        idleSeen.add(tripleKey(next.value.event.user, 'viewer', next.value.event.object));
    }
    expect(idleSeen.size).toBe(expectedAtOpen.size - 1);
    for (const k of idleSeen) expect(expectedAtOpen.has(k)).toBe(true);
    await slow.return?.();
    await idle.return?.();
  }, 120_000);
});

/**
 * Counts event-loop turns: a callback that queues itself again with setImmediate runs once in every
 * turn's check phase. `turn` is the number of the turn running now.
 */
function turns(): { readonly turn: number; stop(): void } {
  let turn = 0;
  let timer: ReturnType<typeof setImmediate> | undefined;
  const tick = (): void => {
    turn++;
    timer = setImmediate(tick);
  };
  timer = setImmediate(tick);
  return {
    get turn() {
      return turn;
    },
    stop: () => clearImmediate(timer),
  };
}

describe('ReadExpansions streams over HTTP under attack', () => {
  it('attack: consumers of a large initial set get at most a chunk per stream per event-loop turn', async () => {
    const server = await start();
    try {
      const latch = server.latch;
      const storeId = (await latch.createStore('pi')).id;
      const modelId = await latch.writeModel(storeId, dslToModel(DSL));
      const fx: Fixture = { latch, storeId, modelId };
      for (let d = 0; d < TRIPLES; d += 100)
        await write(
          fx,
          Array.from({ length: 100 }, (_, i) => grant(d + i)),
        );
      const info = await latch.createPermissionIndex({
        storeId,
        name: 'v',
        relations: [{ object_type: 'doc', relation: 'viewer' }],
      });
      await active(fx, info.record.id);
      const path = `/stores/${storeId}/indexes/${info.record.id}/expansions?authorization_model_id=${modelId}`;
      // The server runs in this process, so a socket's bytes that arrive in one turn were written
      // in the turns since its last read: at most a chunk per stream per turn (a full chunk is
      // written, then the stream yields a turn; src/http/exchange.ts, Exchange.#stream). Its
      // chunks are ≈ 4 KB of lines. A count, not a time: it holds at any load.
      const loop = turns();
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      const received = new Array<number>(STREAMS).fill(0);
      const inTurn = new Array<number>(STREAMS).fill(0);
      const turnOf = new Array<number>(STREAMS).fill(-1);
      let most = 0;
      const sockets = received.map((_, i) => {
        const s = connect(server.port, '127.0.0.1');
        s.on('error', () => undefined);
        s.on('data', (d: Buffer) => {
          received[i] = (received[i] ?? 0) + d.length;
          if (turnOf[i] !== loop.turn) [turnOf[i], inTurn[i]] = [loop.turn, 0];
          inTurn[i] = (inTurn[i] ?? 0) + d.length;
          most = Math.max(most, inTurn[i] ?? 0);
        });
        s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
        return s;
      });
      try {
        // A line per write used to write every line the kernel took (≈ 10 MB on loopback) in one
        // turn per stream: 6.9 s of stall over 150k triples at load 16, and the first read of each
        // socket took 2 MB at once (libuv's most per read event).
        await vi.waitFor(() => expect(Math.min(...received)).toBeGreaterThan(WANT_BYTES), {
          timeout: 150_000,
          interval: 20,
        });
        const health = await fetch(`${server.base}/healthz`);
        expect(health.status).toBe(200);
      } finally {
        loop.stop();
        delay.disable();
        for (const s of sockets) s.destroy();
      }
      const why = `${most} bytes in one turn at most; ${loop.turn} turns; longest stall ${(delay.max / 1e6).toFixed(0)} ms`;
      expect(most, why).toBeLessThanOrEqual(MOST_PER_TURN);
    } finally {
      await server.close();
    }
  }, 480_000);
});
