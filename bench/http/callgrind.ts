// A latch (or bare) server counted by valgrind's callgrind: user-space instructions per JSON
// request, over every thread of the process (the main thread, libuv's pool where LevelDB writes,
// the Piscina workers). Unlike requests/s or CPU time, the count does not move with the load of
// other processes on a shared machine. The server is warmed with wrk under valgrind
// (uninstrumented), then counted over the next wrk run and, when `settle` is given, until
// `settle` resolves (e.g. the decision log's last batch written), so that work a request leaves
// for later is counted too, amortised over the run's requests. Kernel time is not counted.
// Needs `valgrind` and `wrk` on the PATH. Used by bench/http/instructions.ts, bench/decisions.ts
// and bench/shadow.ts.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SERVE_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { LeanClient } from './lean-client.js';
import { wrk } from './scenario.js';

/** Per request: instructions, and with `cacheSim` the L1 misses (instruction, data read, data write). */
export interface Counted {
  perRequest: number;
  requests: number;
  /** Per request in each counted window, when there were several (`perRequest` is the lowest). */
  windows?: number[];
  l1iMisses?: number;
  l1dReadMisses?: number;
  l1dWriteMisses?: number;
}

export interface CountOptions {
  /** The tree of latch the file belongs to (its node_modules are used). */
  readonly dir: string;
  /** The server script, relative to `dir` (bench/http/serve.ts or bench/http/bare.ts). */
  readonly file: string;
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly seconds: number;
  readonly connections: number;
  readonly body: string;
  /** Makes the server ready (store, model, tuples, settings); resolves with the URL to POST `body` to. */
  readonly prepare: (base: string) => Promise<string>;
  /** Run with instructions still counted after the counted wrk run: resolves when the deferred work is done. */
  readonly settle?: ((base: string) => Promise<void>) | undefined;
  /** Run after the count stopped, the server still up (e.g. to confirm the deferred work was done). */
  readonly after?: ((base: string) => Promise<void>) | undefined;
  readonly cacheSim?: boolean | undefined;
  /**
   * Count-driven instead of time-driven (for a loaded machine, where a timed run under valgrind
   * completes too few requests for the fixed costs to vanish): warm up with 3 × `requests`, then
   * count exactly `requests`, sent by a keep-alive client over `connections` connections.
   */
  readonly requests?: number | undefined;
  /**
   * Counted windows (default 1): the counters are zeroed before each and dumped after it, and the
   * window with the fewest instructions per request is reported — a rare event of the process that
   * is not the requests' (a checkpoint written, a major GC) lands in one window, not in all.
   */
  readonly windows?: number | undefined;
}

/** Sends exactly `n` POSTs of `body` over `lanes` connections; throws on any non-200 answer. */
async function drive(
  url: string,
  body: string,
  n: number,
  lanes: number,
): Promise<{ requests: number; non2xx: number }> {
  const u = new URL(url);
  const client = new LeanClient(u.origin, lanes);
  const parsed: unknown = JSON.parse(body);
  let sent = 0;
  let non2xx = 0;
  const lane = async (): Promise<void> => {
    while (sent < n) {
      sent++;
      const r = await client.post(u.pathname, parsed);
      if (r.status !== 200) non2xx++;
    }
  };
  try {
    await Promise.all(Array.from({ length: lanes }, lane));
  } finally {
    client.close();
  }
  return { requests: n, non2xx };
}

/** Starts `file` of tree `dir` under callgrind with instrumentation off; resolves once it listens. */
async function underCallgrind(o: CountOptions, out: string): Promise<{ proc: ChildProcess; port: number }> {
  const args = [
    '--tool=callgrind',
    '--smc-check=all-non-file',
    '--instr-atstart=no',
    `--callgrind-out-file=${out}/cg.%p`,
    ...(o.cacheSim ? ['--cache-sim=yes'] : []),
  ];
  // --single-threaded: V8 compiles and collects on the counted thread, so nothing escapes the count.
  const node = [
    process.execPath,
    ...SERVE_NODE_FLAGS,
    '--single-threaded',
    '--import',
    'tsx',
    path.join(o.dir, o.file),
  ];
  const proc = spawn('valgrind', [...args, ...node], {
    cwd: o.dir,
    env: { ...process.env, ...o.env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  for await (const line of createInterface({ input: proc.stdout as NodeJS.ReadableStream })) {
    const msg = line.startsWith('{') ? (JSON.parse(line) as { port?: number }) : {};
    if (msg.port) return { proc, port: msg.port };
  }
  throw new Error(`${o.file}: exited before listening under valgrind (is valgrind installed?)`);
}

/** Each event's total over callgrind's output files (`events:` names them, `totals:` counts them). */
function eventTotals(out: string, seen = new Set<string>()): Map<string, number> {
  const totals = new Map<string, number>();
  for (const f of readdirSync(out)) {
    if (seen.has(f)) continue;
    seen.add(f);
    const text = readFileSync(path.join(out, f), 'utf8');
    const names = /^events: (.+)$/m.exec(text)?.[1]?.split(' ') ?? [];
    const values = /^totals: (.+)$/m.exec(text)?.[1]?.split(' ').map(Number) ?? [];
    names.forEach((name, i) => totals.set(name, (totals.get(name) ?? 0) + (values[i] ?? 0)));
  }
  return totals;
}

/** Instructions per request of one server: warm-up rounds uncounted, then one counted round. */
export async function countInstructions(o: CountOptions): Promise<Counted> {
  const out = mkdtempSync(path.join(tmpdir(), 'latch-callgrind-'));
  const { proc, port } = await underCallgrind(o, out);
  try {
    const base = `http://127.0.0.1:${port}`;
    const url = await o.prepare(base);
    const load = (warm: boolean): Promise<{ requests: number; non2xx: number }> =>
      o.requests !== undefined
        ? drive(url, o.body, warm ? 3 * o.requests : o.requests, o.connections)
        : wrk(url, o.body, warm ? 5 : o.seconds, o.connections);
    // The hot functions reach TurboFan.
    if (o.requests !== undefined) await load(true);
    else for (let i = 0; i < 3; i++) await load(true);
    await o.settle?.(base);
    const pid = String(proc.pid);
    const seen = new Set(readdirSync(out));
    let best: { totals: Map<string, number>; requests: number } | undefined;
    const windows: number[] = [];
    execFileSync('callgrind_control', ['-i', 'on', pid], { stdio: 'ignore' });
    for (let w = 0; w < (o.windows ?? 1); w++) {
      execFileSync('callgrind_control', ['-z', pid], { stdio: 'ignore' });
      const run = await load(false);
      await o.settle?.(base);
      execFileSync('callgrind_control', ['-d', pid], { stdio: 'ignore' });
      if (!(run.requests > 0)) throw new Error(`${o.file}: no request answered in the counted run`);
      if (run.non2xx > 0) throw new Error(`${o.file}: ${run.non2xx} non-2xx answers`);
      const totals = eventTotals(out, seen);
      const ir = (totals.get('Ir') ?? 0) / run.requests;
      windows.push(Math.round(ir));
      if (!best || ir < (best.totals.get('Ir') ?? 0) / best.requests) best = { totals, requests: run.requests };
    }
    execFileSync('callgrind_control', ['-i', 'off', pid], { stdio: 'ignore' });
    await o.after?.(base);
    const { totals, requests } = best as { totals: Map<string, number>; requests: number };
    const per = (event: string): number => Math.round((totals.get(event) ?? 0) / requests);
    const counted: Counted = { perRequest: per('Ir'), requests };
    if (windows.length > 1) counted.windows = windows;
    if (o.cacheSim) {
      counted.l1iMisses = per('I1mr');
      counted.l1dReadMisses = per('D1mr');
      counted.l1dWriteMisses = per('D1mw');
    }
    return counted;
  } finally {
    proc.kill('SIGTERM');
    // LATCH_BENCH_CALLGRIND_KEEP=<dir>: the output is kept there for callgrind_annotate (a profile).
    const keep = process.env.LATCH_BENCH_CALLGRIND_KEEP;
    if (keep) cpSync(out, path.join(keep, path.basename(out)), { recursive: true });
    rmSync(out, { recursive: true, force: true });
  }
}
