// `--http-threads N`: the N − 1 HTTP threads beside the main thread's app, each a worker thread
// with its own uWS app on the shared API port, every one forwarding its operations to this
// process's one engine through a LatchHost. Started after the main app is listening (the port is
// known then, port 0 included); closed before the engine.

import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { DEFAULT_BUCKET, type Bucket, type ResolvedAuthConfig } from '../../api/auth/config.js';
import type { Latch } from '../../engine/contract.js';
import { logger } from '../../log.js';
import { LatchHost } from './latch-host.js';
import type { LocalCheckData } from './local-check.js';
import { Scratch } from '../../engine/evaluation/walker/request.js';
import { walkerModule } from '../../engine/evaluation/walker/wasm.js';
import { memory } from '../../index/memory.js';
import { MAX_BOARD_THREADS, type ThreadBoard } from '../../index/thread-board.js';
import type { MetricsShareData } from '../metrics-share.js';
import type { ToMain, ToThread } from './protocol.js';
import type { ThreadData, ThreadEvent } from './worker.js';

/**
 * An HTTP thread's heap limits: a young generation of 3 MB, which V8 makes three 1 MB
 * semi-spaces. Under load V8 grows an isolate's two active semi-spaces up to the process's
 * `--max-semi-space-size` (4 MB with the serve flags): 8 MB resident in every thread. With 1 MB
 * they keep at most 2 MB; what survives two scavenges instead (requests in flight) moves to the
 * old generation, which under load grew by 1–5 MB until its next major GC, less than the 6 MB saved
 * (bench/README.md, "HTTP threads").
 */
export const THREAD_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 3 } as const;

/** How often each thread's copy of the engine figures (`stats()`, a metrics scrape) is refreshed. */
const STATS_MS = 1000;

export interface HttpThreads {
  /** Threads started (N − 1). */
  readonly count: number;
  /** Each thread stops accepting, finishes its in-flight requests within `graceMs`, and ends. */
  close(graceMs: number): Promise<void>;
}

/**
 * The thread's entry: the one-file bundle (`npm run build:ts` writes it next to worker.js, see
 * scripts/bundle-thread.mjs: a thread then loads one module instead of ~300), else the built
 * worker.js, or (running from the TypeScript sources, as the tests do) a bootstrap that registers
 * tsx in the thread first. Its heap has `THREAD_RESOURCE_LIMITS` (see `withThreadHeapLimits`).
 *
 * `LATCH_THREAD_ENTRY` (a test hook, read only when running from the sources): a built entry to
 * start instead of the tsx bootstrap. The tests set it to the bundle when dist/ is as new as src/
 * (test/support/latch-process.ts): tsx compiles every module again in each thread, about 2.2 s of
 * CPU per thread against 0.5 s for the bundle.
 */
function spawn(data: ThreadData): Worker {
  const options = { workerData: data, resourceLimits: THREAD_RESOURCE_LIMITS };
  if (!import.meta.url.endsWith('.ts')) return new Worker(builtEntry(), options);
  const built = process.env.LATCH_THREAD_ENTRY;
  if (built) return new Worker(built, options);
  const entry = new URL('./worker.ts', import.meta.url).href;
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { ...options, eval: true });
}

/** The bundle when it was built from the same sources as worker.js (not older), else worker.js. */
function builtEntry(): string {
  const plain = fileURLToPath(new URL('./worker.js', import.meta.url));
  const bundle = fileURLToPath(new URL('./worker.bundle.js', import.meta.url));
  try {
    return statSync(bundle).mtimeMs >= statSync(plain).mtimeMs ? bundle : plain;
  } catch {
    return plain; // no bundle (built by tsc alone)
  }
}

/**
 * Runs `start` (which creates the HTTP threads' isolates and resolves once each has started or
 * failed) with the process's `--max-semi-space-size` unset, then sets it back. V8 takes that flag
 * over a worker's `resourceLimits` when it sizes a new isolate's heap, and reads it then only: the
 * main isolate (sized when the process started) and the walker pool's workers (started with the
 * engine, before the threads) keep the flag's value.
 */
export async function withThreadHeapLimits<T>(start: () => Promise<T>): Promise<T> {
  const semi = semiSpaceFlag();
  if (semi === undefined) return start();
  setFlagsFromString('--max-semi-space-size=0');
  try {
    return await start();
  } finally {
    setFlagsFromString(`--max-semi-space-size=${semi}`);
  }
}

/**
 * The `--max-semi-space-size` this process was started with, or undefined. Node hands V8 the
 * NODE_OPTIONS flags before the command line's, and the last value given wins.
 */
function semiSpaceFlag(): string | undefined {
  const given = [...(process.env.NODE_OPTIONS ?? '').split(/\s+/), ...process.execArgv];
  let value: string | undefined;
  for (const a of given) {
    const m = /^--max[-_]semi[-_]space[-_]size=(\d+)$/.exec(a);
    if (m) value = m[1];
  }
  return value;
}

interface Thread {
  readonly worker: Worker;
  readonly host: LatchHost;
  readonly exited: Promise<void>;
}

/** Threads asked to close: their exit is expected. */
const closing = new WeakSet<Worker>();

function startOne(latch: Latch, data: ThreadData): Promise<Thread> {
  const worker = spawn(data);
  const host = new LatchHost(latch, worker);
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return new Promise<Thread>((resolve, reject) => {
    worker.on('message', (m: readonly ToMain[] | ThreadEvent) => {
      if (Array.isArray(m)) return host.receive(m);
      const e = m as ThreadEvent;
      if (e.t === 'listening') resolve({ worker, host, exited });
      else if (e.t === 'failed') reject(new Error(`an HTTP thread could not start: ${e.message}`));
    });
    worker.once('error', (err) => {
      logger.log('error', 'HTTP thread failed', { cause: err.message });
      reject(err);
    });
    let listening = false;
    worker.on('message', (m: unknown) => void (listening ||= (m as ThreadEvent).t === 'listening'));
    void exited.then(() => {
      host.closeAll();
      if (listening && !closing.has(worker))
        logger.log('error', 'an HTTP thread ended; its connections are gone, the others keep serving', {
          thread: worker.threadId,
        });
      reject(new Error('an HTTP thread ended during start-up'));
    });
  });
}

/**
 * Starts `count` HTTP threads on `host:port` (already bound by the main app with a shared bind).
 * With `board` (the engine publishes its stores there), each thread answers Check from the shared
 * index: it gets the board, the memory, the walker module and a scratch area allocated here.
 */
export async function startHttpThreads(
  latch: Latch,
  count: number,
  data: Omit<ThreadData, 'config' | 'stats' | 'log' | 'local'> & {
    /** The main thread's metrics share (segment 0 its own), and whether threads serve /metrics on the API port. */
    readonly metrics?: { readonly share: MetricsShareData; readonly route: boolean } | undefined;
  },
  board?: ThreadBoard,
): Promise<HttpThreads> {
  const { metrics: _, ...plain } = data;
  const full: ThreadData = { ...plain, config: latch.config, stats: latch.stats(), log: logger.current() };
  const scratches = board ? Array.from({ length: Math.min(count, MAX_BOARD_THREADS) }, () => new Scratch()) : [];
  const local = (i: number): LocalCheckData | undefined => {
    const s = scratches[i];
    return board && s && { board: board.buffer, slot: i, memory, module: walkerModule(), scratch: s.ctx };
  };
  // Thread i counts its requests in segment i + 1 of the main thread's metrics share.
  const counted = (i: number): ThreadData['http'] => {
    const m = data.metrics;
    return m ? { ...data.http, threadMetrics: { share: m.share, thread: i + 1, route: m.route } } : data.http;
  };
  const started = await withThreadHeapLimits(() =>
    Promise.allSettled(
      Array.from({ length: count }, (_, i) => startOne(latch, { ...full, http: counted(i), local: local(i) })),
    ),
  );
  const threads = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const close = async (graceMs: number): Promise<void> => {
    clearInterval(timer);
    const msg: ToThread = { t: 'close', graceMs };
    for (const t of threads) {
      closing.add(t.worker);
      t.worker.postMessage(msg);
    }
    await Promise.all(threads.map((t) => t.exited));
    for (const t of threads) t.host.closeAll();
    // No thread reads the index any more.
    for (const s of scratches) s.region?.drop();
    scratches.length = 0;
  };
  const timer = setInterval(() => {
    const stats: ToThread = { t: 'stats', v: latch.stats() };
    for (const t of threads) t.host.send(stats);
  }, STATS_MS);
  timer.unref();
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await close(0);
    throw failed.reason;
  }
  return { count, close };
}

/**
 * Why `--http-threads` above 1 cannot run with this auth configuration, or undefined. Rate limits,
 * store logs and client-credentials' client and key stores are state of one thread; until they are
 * shared, a process whose threads would each keep their own copy refuses to start.
 */
export function threadsRefusal(auth: ResolvedAuthConfig): string | undefined {
  if (auth.mode === 'client-credentials')
    return '--http-threads above 1 needs auth mode none, preshared or oidc (client-credentials keeps its clients and keys on one thread)';
  // The default buckets (10M/s) never limit one process, so per-thread copies of them behave the same.
  const limited = Object.values(auth.rateLimits ?? {}).some(
    (b: Bucket) => b.perSecond !== DEFAULT_BUCKET.perSecond || b.burst !== DEFAULT_BUCKET.burst,
  );
  if (limited) return '--http-threads above 1 cannot run with --rate-limits (the buckets are per thread)';
  if (auth.logRetentionDays > 0)
    return '--http-threads above 1 needs --log-retention-days 0 (store logs are written by one thread)';
  return undefined;
}
