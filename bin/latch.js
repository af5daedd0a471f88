#!/usr/bin/env node
// The `latch` command: runs the compiled CLI from dist/ (build first with `npm run build`).
//
// `latch serve` needs V8 flags that only take effect when Node starts (dist/src/cli/node-flags.js,
// the ones `npm start` passes). When they are missing — a globally installed `latch serve`, or
// `node bin/latch.js serve` — the server is started in a child Node process that has them, and the
// environment of SERVE_ENV (MALLOC_ARENA_MAX, read by the C library at start) where it is not set;
// this process forwards signals to it and exits with its code. LATCH_NO_REEXEC=1 turns that off.
// With the flags already given (`npm start`, the Dockerfile, the systemd unit) there is no child:
// those set SERVE_ENV themselves.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);

/** The serve flags this process lacks (none for other commands), and the serve environment. */
async function missingFlags() {
  if (args[0] !== 'serve' || process.env.LATCH_NO_REEXEC === '1') return { flags: [], env: {} };
  const { missingServeFlags, SERVE_ENV } = await import('../dist/src/cli/node-flags.js');
  return { flags: missingServeFlags(process.execArgv, process.env.NODE_OPTIONS), env: SERVE_ENV };
}

function reexec(flags, serveEnv) {
  const child = spawn(process.execPath, [...flags, ...process.execArgv, fileURLToPath(import.meta.url), ...args], {
    stdio: 'inherit',
    // Its own process group: a terminal's Ctrl-C reaches this process only, which forwards it once.
    detached: true,
    env: { ...serveEnv, ...process.env, LATCH_NO_REEXEC: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    console.error(`latch: could not start the server process: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

missingFlags()
  .then(({ flags, env }) => {
    if (flags.length > 0) return reexec(flags, env);
    return import('../dist/src/cli/main.js')
      .then((m) => m.main(args))
      .then((code) => {
        if (typeof code === 'number') process.exitCode = code;
      });
  })
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
