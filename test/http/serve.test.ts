// `latch serve` as a process: usage errors exit 2, --help exits 0, and SIGTERM stops accepting,
// lets the in-flight request finish and exits 0.

import { spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { untilInFlight } from '../support/wait.js';
import { LATCH_ENTRY } from '../support/latch-process.js';

function latch(args: string[]): {
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  kill: (s: NodeJS.Signals) => void;
  stderrLine: () => Promise<string>;
  /** Resolves once stderr contains `text`. */
  stderrUntil: (text: string) => Promise<void>;
} {
  const proc = spawn(process.execPath, [...LATCH_ENTRY, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters: ((line: string) => void)[] = [];
  const untils: { text: string; resolve: () => void }[] = [];
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    const line = stderr.split('\n').find((l) => l.includes('listening'));
    if (line) waiters.splice(0).forEach((w) => w(line));
    for (const u of untils.filter((u) => stderr.includes(u.text))) {
      untils.splice(untils.indexOf(u), 1);
      u.resolve();
    }
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    proc.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return {
    done,
    kill: (s) => proc.kill(s),
    stderrLine: () => new Promise((r) => waiters.push(r)),
    stderrUntil: (text) =>
      stderr.includes(text) ? Promise.resolve() : new Promise((resolve) => untils.push({ text, resolve })),
  };
}

describe('latch serve', () => {
  test('an unknown flag prints what is wrong and exits 2', async () => {
    const r = await latch(['serve', '--prot', '9']).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--prot'");
  });

  test('a bad value exits 2', async () => {
    const r = await latch(['serve', '--port', 'abc']).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--port');
  });

  test('--help exits 0', async () => {
    const r = await latch(['serve', '--help']).done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--data-dir');
  });

  test('SIGTERM: in-flight request finishes, then exit 0', async () => {
    const p = latch(['serve', '--port', '0', '--datastore', 'memory']);
    const line = await p.stderrLine();
    const port = (JSON.parse(line) as { port: number }).port;
    const base = `http://127.0.0.1:${port}`;
    const store = (
      (await (await fetch(`${base}/stores`, { method: 'POST', body: '{"name":"sigterm"}' })).json()) as { id: string }
    ).id;
    // A request whose body is still arriving when SIGTERM lands.
    let push: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"name":'));
        push = () => {
          c.enqueue(new TextEncoder().encode('"late-store"}'));
          c.close();
        };
      },
    });
    const inFlight = fetch(`${base}/stores`, { method: 'POST', body, duplex: 'half' } as RequestInit);
    await untilInFlight(base, 1); // its headers reached the server
    p.kill('SIGTERM');
    await p.stderrUntil('"msg":"shutting down"');
    push?.();
    const r = await inFlight;
    expect(r.status).toBe(201);
    const exit = await p.done;
    expect(exit.code).toBe(0);
    expect(store).toMatch(/^[0-9A-Z]{26}$/);
  });
});
