// The V8 flags `latch serve` is started with (`npm start`, and the HTTP benchmarks for both latch
// and the bare-uWS baseline). V8 reads the young-generation size only when the process starts, so
// these are command-line flags, not settings.
//
// Why (bench/results/2026-11-23-http-and-msgpack-channel.json, "Third session"): at 34k Check requests/s on 2 shared cores,
// Node's defaults grew the young generation to ~16 MB and each scavenge paused the event loop
// 1.3–2.9 ms (p90 3–4.8 ms): the requests caught behind it were the p99. With a 4 MB ceiling
// scavenges run about every 30 ms and pause 0.65–0.7 ms (p90 ≈ 0.8 ms) for the same total GC
// time. Scavenging on the main thread alone avoids waiting for helper threads that the load
// generator or the kernel has preempted: with parallel scavenging and the same 4 MB, p90 was
// 0.93–1.6 ms and single pauses reached 11 ms. On a machine with idle cores parallel scavenging
// shortens pauses instead; drop `--no-parallel-scavenge` there (docs/operations.md).
//
// Fourth session: once request ids stopped promoting a string per request, scavenges under the
// same load pause 0.2–0.4 ms. A fixed 8 MB semi-space then made them a quarter as frequent (and
// ≈ 0.5 ms) but did not move the p99 in interleaved rounds, so the 4 MB ceiling stays.

export const SERVE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--no-parallel-scavenge'];

/** The serve flags a process started with `execArgv` and `nodeOptions` (NODE_OPTIONS) lacks. */
export function missingServeFlags(execArgv: readonly string[], nodeOptions = ''): string[] {
  const have = [...execArgv, ...nodeOptions.split(/\s+/)];
  return SERVE_NODE_FLAGS.filter((f) => !have.includes(f));
}

// The environment `latch serve` is started with, for what only the C library reads, and only when
// the process starts. `MALLOC_ARENA_MAX=2` (glibc; other C libraries ignore it): by default glibc
// gives each thread that allocates a malloc arena of its own, up to 8 per core, and each arena
// keeps memory it has freed. Measured with 100k tuples on 2 cores under load, arenas other than
// the main thread's held 19 MB in a one-thread process (V8's and libuv's helper threads) and 7–9
// MB more for each HTTP thread (`--http-threads`); with 2 arenas (the main thread's, and one
// every other thread shares) malloc's whole footprint was 12 MB smaller with one thread, and an
// HTTP thread added under 1 MB to it (bench/README.md, "HTTP threads"). The cost: the threads
// other than the main one take that arena's lock in turn; bench/http/threads.ts compares the CPU
// per request with glibc's default in the same run. Set by `npm start`, the Dockerfile, the
// systemd unit, and by bin/latch.js when it starts the server in a child process; a value already
// in the environment is kept.
export const SERVE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
