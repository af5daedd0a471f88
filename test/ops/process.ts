// A real `latch serve` process for the operations tests: spawned through the test entry
// (test/support/latch-process.ts), its port read from the "latch listening" log line, its stderr
// kept for assertions.

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, vi } from 'vitest';
import { send } from '../support/http-client.js';
import { LATCH_ENTRY } from '../support/latch-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface LatchProcess {
  readonly proc: ChildProcess;
  readonly port: number;
  readonly base: string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
}

/** A port free right now (for processes that do not log where they listen). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts `latch serve <args>` and resolves once it listens: port 0 and the port read from the
 * "latch listening" line, or with `port` given, once /healthz answers (quiet log levels).
 */
export async function startLatch(
  args: readonly string[],
  env: Record<string, string> = {},
  port?: number,
): Promise<LatchProcess> {
  const proc = spawn(process.execPath, [...LATCH_ENTRY, 'serve', '--port', String(port ?? 0), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const bound = await new Promise<number>((resolve, reject) => {
    proc.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"msg":"latch listening"[^\n]*"port":(\d+)/.exec(err);
      if (m && port === undefined) resolve(Number(m[1]));
    });
    void exited.then((code) => reject(new Error(`latch serve exited (${code}) before listening:\n${err}`)));
    if (port !== undefined) void poll(port).then(resolve, reject);
  });
  return { proc, port: bound, base: `http://127.0.0.1:${bound}`, stderr: () => err, exited };
}

async function poll(port: number): Promise<number> {
  // Connection refused (not listening yet) rejects, and vi.waitFor retries.
  await vi.waitFor(
    async () => expect((await fetch(`http://127.0.0.1:${port}/healthz`)).ok, `nothing listens on ${port}`).toBe(true),
    { timeout: 60_000, interval: 50 },
  );
  return port;
}

/** POST/GET JSON; resolves with the status and parsed body (network errors reject). */
export async function json(
  base: string,
  method: string,
  p: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const r = await send(base + p, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  return { status: r.status, body: r.text ? (JSON.parse(r.text) as Record<string, unknown>) : {}, headers: r.headers };
}

export const DOC_MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
    },
  ],
};

/** Every tuple of a store, through the Read API's pages. */
export async function readAll(base: string, store: string): Promise<Set<string>> {
  const out = new Set<string>();
  let token = '';
  do {
    const r = await json(base, 'POST', `/stores/${store}/read`, { page_size: 100, continuation_token: token });
    if (r.status !== 200) throw new Error(`read: ${r.status} ${JSON.stringify(r.body)}`);
    for (const t of r.body.tuples as { key: { user: string; relation: string; object: string } }[])
      out.add(`${t.key.object}#${t.key.relation}@${t.key.user}`);
    token = (r.body.continuation_token as string) ?? '';
  } while (token);
  return out;
}
