// Per-write timestamps inside a replication benchmark node (LATCH_BENCH_TRACE=<file>): for every
// tuple object, when its commit resolved (the writing node), when a commit event for its revision
// arrived, when the change-log read that returned it started and returned, and when the index
// applied it (the following node). Epoch ms (performance.timeOrigin + now), so two processes on
// one machine compare. Written to <file> as JSON at SIGUSR2 (then {"traced": file} on stdout) and
// at SIGTERM. Benchmark instrumentation only: it wraps methods of one storage object.

import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { StoreIndex } from '../../src/index/store-index.js';
import type { RevisionChange, Storage, WriteResult } from '../../src/storage/types.js';

const at = (): number => performance.timeOrigin + performance.now();

export interface Trace {
  start: Record<string, number>;
  commit: Record<string, number>;
  event: Record<string, number>;
  readStart: Record<string, number>;
  readEnd: Record<string, number>;
  applied: Record<string, number>;
}

export function traceNode(storage: Storage, file: string): void {
  const t: Trace = { start: {}, commit: {}, event: {}, readStart: {}, readEnd: {}, applied: {} };
  const write = storage.writeTuples.bind(storage);
  storage.writeTuples = async (storeId, input) => {
    const begun = at();
    const r = await write(storeId, input);
    for (const k of r.written) t.start[k.object] = begun;
    const now = at();
    for (const k of r.written) t.commit[k.object] = now;
    return r;
  };
  const subscribe = storage.subscribe.bind(storage);
  storage.subscribe = (listener) =>
    subscribe((e) => {
      if (e.kind === 'tuples') {
        const heard = (t.event[`${e.storeId}@${e.revision}`] ??= at());
        // An event that carries its changes is applied without a log read: its tuples' event time is this.
        for (const k of e.changes?.written ?? []) t.event[k.object] ??= heard;
      }
      listener(e);
    });
  const since = storage.changesSince.bind(storage);
  storage.changesSince = (storeId, revision) => {
    const inner = since(storeId, revision);
    return {
      async *[Symbol.asyncIterator](): AsyncGenerator<RevisionChange> {
        const start = at();
        const got: RevisionChange[] = [];
        for await (const ch of inner) got.push(ch);
        const end = at();
        for (const ch of got) {
          t.readStart[ch.tuple.object] = start;
          t.readEnd[ch.tuple.object] = end;
          t.event[ch.tuple.object] = t.event[`${storeId}@${ch.revision}`] ?? NaN;
        }
        yield* got;
      },
    };
  };
  const apply = StoreIndex.prototype.apply;
  StoreIndex.prototype.apply = function (this: StoreIndex, result: WriteResult): void {
    apply.call(this, result);
    const now = at();
    for (const k of result.written) t.applied[k.object] ??= now;
  };
  process.on('SIGUSR2', () => {
    writeFileSync(file, JSON.stringify(t));
    process.stdout.write(JSON.stringify({ traced: file }) + '\n');
  });
  process.once('SIGTERM', () => writeFileSync(file, JSON.stringify(t)));
}
