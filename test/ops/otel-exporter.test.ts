// `latch serve --otel-exporter`: console starts the SDK and prints each span with latch's
// resource (service name, version, OTEL_RESOURCE_ATTRIBUTES); an exporter whose packages are not
// installed stops the start with the `npm install` line that fixes it.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { LATCH_ENTRY } from '../support/latch-process.js';

const root = join(import.meta.dirname, '../..');
const entry = LATCH_ENTRY;
const require = createRequire(import.meta.url);
const resolvable = (name: string): boolean => {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
};

test('--otel-exporter console prints the spans of a request with the service name and resource attributes', async () => {
  const p = spawn(
    process.execPath,
    [...entry, 'serve', '--datastore', 'memory', '--port', '0', '--otel-exporter', 'console'],
    {
      cwd: root,
      env: { ...process.env, OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=walkthrough' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  p.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => p.once('exit', resolve));
  const port = await new Promise<number>((resolve, reject) => {
    p.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /"msg":"latch listening".*?"port":(\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  const res = await fetch(`http://127.0.0.1:${port}/stores`, {
    method: 'POST',
    body: JSON.stringify({ name: 'otel-demo' }),
  });
  expect(res.status).toBe(201);
  expect(res.headers.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  p.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(out).toContain("name: 'latch.CreateStore'");
  expect(out).toContain("'service.name': 'latch'");
  expect(out).toContain("'deployment.environment': 'walkthrough'");
  expect(out).not.toContain("'latch.store_id': undefined");
});

test.runIf(!resolvable('@opentelemetry/exporter-trace-otlp-http'))(
  '--otel-exporter otlp without its packages fails the start with the npm install line',
  () => {
    const r = spawnSync(
      process.execPath,
      [...entry, 'serve', '--datastore', 'memory', '--port', '0', '--otel-exporter', 'otlp'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('@opentelemetry/exporter-trace-otlp-http');
    expect(r.stderr).toContain('npm install @opentelemetry/sdk-trace-base');
  },
);
