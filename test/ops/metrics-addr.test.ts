// `--metrics-addr`: /metrics on its own address (as OpenFGA serves its metrics on their own port),
// so an exposed API port does not expose traffic figures; the API port then has no /metrics.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.js';
import { resolveSettings, serveConfig } from '../../src/cli/settings-load.js';
import { startServer, type RunningServer } from '../../src/main.js';

const config = (argv: string[], env: Record<string, string> = {}) => serveConfig(resolveSettings(argv, env));

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({
    host: '127.0.0.1',
    port: 0,
    datastore: 'memory',
    metricsAddress: { host: '127.0.0.1', port: 0 },
  });
});
afterAll(() => server.close());

describe('metrics on their own address', () => {
  it('serves GET /metrics there, counting the API traffic', async () => {
    expect((await fetch(`http://127.0.0.1:${server.port}/stores`)).status).toBe(200);
    expect(server.metricsPort).toBeGreaterThan(0);
    expect(server.metricsPort).not.toBe(server.port);
    const r = await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await r.text()).toMatch(/^latch_http_requests_total\{endpoint="ListStores",status="200"\} 1$/m);
  });

  it('the API port has no /metrics, and the metrics address nothing else', async () => {
    const api = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(api.status).toBe(404);
    expect(((await api.json()) as { code: string }).code).toBe('undefined_endpoint');
    expect((await fetch(`http://127.0.0.1:${server.metricsPort}/stores`)).status).toBe(404);
  });

  it('a metrics address in use stops the start', async () => {
    const port = server.metricsPort as number;
    await expect(
      startServer({ host: '127.0.0.1', port: 0, datastore: 'memory', metricsAddress: { host: '127.0.0.1', port } }),
    ).rejects.toThrow(`cannot listen on 127.0.0.1:${port}: the address is already in use`);
  });
});

describe('the metrics-addr setting', () => {
  it('reads host:port and [v6]:port from the flag, the environment and the config file', () => {
    expect(config(['--metrics-addr', '127.0.0.1:9090']).server.metricsAddress).toEqual({
      host: '127.0.0.1',
      port: 9090,
    });
    expect(config([], { LATCH_METRICS_ADDR: '[::1]:9091' }).server.metricsAddress).toEqual({ host: '::1', port: 9091 });
    expect(config([]).server.metricsAddress).toBeUndefined();
  });

  it('refuses a malformed address and one set with --metrics=false', () => {
    expect(() => config(['--metrics-addr', '9090'])).toThrow(
      new UsageError("--metrics-addr must be host:port (e.g. 127.0.0.1:9090 or [::1]:9090), got '9090'"),
    );
    expect(() => config([], { LATCH_METRICS_ADDR: 'localhost:70000' })).toThrow(
      /^LATCH_METRICS_ADDR must be host:port/,
    );
    expect(() => config(['--metrics-addr', '127.0.0.1:9090', '--metrics=false'])).toThrow(
      '--metrics-addr needs metrics on',
    );
  });
});
