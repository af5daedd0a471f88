// Two latch servers on one port: the second fails to start with a clear message instead of
// sharing the port (uWS sets SO_REUSEPORT unless told otherwise, and the kernel then splits the
// connections between both).

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { startServer } from '../../src/main.js';
import { startLatch, type LatchProcess } from './process.js';
import { LATCH_ENTRY } from '../support/latch-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const running: LatchProcess[] = [];

afterAll(async () => {
  for (const p of running) {
    p.proc.kill('SIGTERM');
    await p.exited;
  }
});

/** `latch serve` to its exit: code and stderr. */
function serveToExit(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const proc = spawn(process.execPath, [...LATCH_ENTRY, 'serve', ...args], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
  return new Promise((resolve) => proc.on('exit', (code) => resolve({ code, stderr })));
}

describe('a second latch on a port in use', () => {
  test('fails to start, saying the address is in use', async () => {
    const first = await startLatch(['--datastore', 'memory']);
    running.push(first);
    const second = await serveToExit(['--datastore', 'memory', '--port', String(first.port)]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`cannot listen on 127.0.0.1:${first.port}: the address is already in use`);
    expect((await fetch(`${first.base}/healthz`)).status).toBe(200);
  });

  test('startServer rejects while another process listens there', async () => {
    const first = running[0] as LatchProcess;
    await expect(startServer({ host: '127.0.0.1', port: first.port, datastore: 'memory' })).rejects.toThrow(
      /already in use/,
    );
  });
});
