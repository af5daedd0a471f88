// A server-side failure is logged with its cause and request id, and the client gets only
// `internal_error` and the id. The failure is real: the store's LevelDB is closed under a
// running server, so storage throws "Database is not open".

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/main.js';

describe('error logging', () => {
  it('logs the cause, sends only internal_error and the request id', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'latch-error-log-'));
    const server = await startServer({ host: '127.0.0.1', port: 0, dataDir: dir });
    const base = `http://127.0.0.1:${server.port}`;
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    try {
      await server.latch.close();
      process.stderr.write = ((chunk: string | Uint8Array) =>
        written.push(String(chunk)) > 0) as typeof process.stderr.write;
      const r = await fetch(`${base}/stores`, { method: 'POST', body: '{"name":"after-close"}' });
      process.stderr.write = write;
      const body = await r.text();
      expect(r.status).toBe(500);
      expect(JSON.parse(body)).toEqual({ code: 'internal_error', message: 'Internal Server Error' });
      expect(body).not.toContain('Database');
      const line = written
        .join('')
        .split('\n')
        .find((l) => l.includes('"request failed"'));
      expect(line).toBeDefined();
      const logged = JSON.parse(line as string) as {
        level: string;
        request_id: string;
        endpoint: string;
        cause: { message: string; stack: string };
      };
      expect(logged).toMatchObject({
        level: 'error',
        request_id: r.headers.get('x-request-id'),
        endpoint: 'CreateStore',
      });
      expect(logged.cause.message).toContain('Database is not open');
      expect(logged.cause.stack).toContain('createStore');
    } finally {
      process.stderr.write = write;
      await server.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
