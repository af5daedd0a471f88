// OpenTelemetry tracing on a real server: nothing without an SDK; with one (sdk-trace-base, an
// in-memory exporter, the async-hooks context manager) a SERVER span per HTTP request that
// continues the caller's W3C `traceparent` and answers with its own, an operation span under
// it and an engine span under that, carrying store, model, operation, allowed and depth.

import { context, trace } from '@opentelemetry/api';
import { AsyncHooksContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { DOC_MODEL } from './process.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

async function post(
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** A store with the document model and `user:anne viewer doc:1`. */
async function seed(base: string): Promise<string> {
  const store = ((await (await post(base, '/stores', { name: 'traced' })).json()) as { id: string }).id;
  expect((await post(base, `/stores/${store}/authorization-models`, DOC_MODEL)).status).toBe(201);
  expect(
    (
      await post(base, `/stores/${store}/write`, {
        writes: { tuple_keys: [{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }] },
      })
    ).status,
  ).toBe(200);
  return store;
}

describe('without an SDK', () => {
  it('no span is made and no traceparent is sent', async () => {
    const server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const store = await seed(base);
      const r = await post(
        base,
        `/stores/${store}/check`,
        { tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' } },
        { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      );
      expect(await r.json()).toEqual({ allowed: true, resolution: '' });
      expect(r.headers.get('traceparent')).toBeNull();
    } finally {
      await server.close();
    }
  });

  it("a minified build (the HTTP threads' bundle) finds no SDK either", async () => {
    // Built as scripts/bundle-thread.mjs builds the threads' code: the API bundled in, minified,
    // so no class keeps its name. Such a build once took the API's no-op provider for an SDK.
    const out = await build({
      entryPoints: [fileURLToPath(new URL('../../src/http/tracing.ts', import.meta.url))],
      bundle: true,
      minify: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      write: false,
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'latch-tracing-'));
    try {
      const file = path.join(dir, 'tracing.mjs');
      writeFileSync(file, out.outputFiles[0]?.text ?? '');
      const minified = (await import(pathToFileURL(file).href)) as typeof import('../../src/http/tracing.js');
      expect(out.outputFiles[0]?.text).not.toContain('class NoopTracerProvider');
      const server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
      try {
        expect(minified.openTracing(server.latch)).toBeUndefined();
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('with an SDK installed before the server starts', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let server: RunningServer;
  let base: string;
  let store: string;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncHooksContextManager().enable());
    trace.setGlobalTracerProvider(provider);
    server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
    base = `http://127.0.0.1:${server.port}`;
    store = await seed(base);
  });

  afterAll(async () => {
    await server?.close();
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  /** The spans of the trace `traceId` once its SERVER span has ended (it ends after the reply). */
  async function traceOf(traceId: string): Promise<ReadableSpan[]> {
    for (let i = 0; i < 1000; i++) {
      const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      if (spans.some((s) => s.name.startsWith('POST '))) return spans;
      await new Promise((r) => setImmediate(r));
    }
    throw new Error(`no server span for trace ${traceId}`);
  }

  const byName = (spans: ReadableSpan[], name: string): ReadableSpan => {
    const s = spans.find((x) => x.name === name);
    if (!s) throw new Error(`no span ${name} in ${spans.map((x) => x.name).join(', ')}`);
    return s;
  };

  it('a Check continues the caller trace: request → operation → engine spans, traceparent back', async () => {
    const r = await post(
      base,
      `/stores/${store}/check`,
      { tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' } },
      { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`, tracestate: 'vendor=abc' },
    );
    expect(await r.json()).toEqual({ allowed: true, resolution: '' });
    const spans = await traceOf(TRACE_ID);
    const http = byName(spans, 'POST /stores/{store_id}/check');
    const op = byName(spans, 'latch.Check');
    const engine = byName(spans, 'latch.engine.check');
    expect(http.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(http.spanContext().traceState?.get('vendor')).toBe('abc');
    expect(op.parentSpanContext?.spanId).toBe(http.spanContext().spanId);
    expect(engine.parentSpanContext?.spanId).toBe(op.spanContext().spanId);
    expect(r.headers.get('traceparent')).toBe(`00-${TRACE_ID}-${http.spanContext().spanId}-01`);
    expect(http.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/stores/{store_id}/check',
      'http.response.status_code': 200,
    });
    const modelId = r.headers.get('openfga-authorization-model-id');
    expect(op.attributes).toMatchObject({
      'latch.operation': 'Check',
      'latch.store_id': store,
      'latch.model_id': modelId,
    });
    expect(engine.attributes).toMatchObject({
      'latch.operation': 'check',
      'latch.store_id': store,
      'latch.model_id': modelId,
      'latch.allowed': true,
      'latch.resolution_depth': 0,
    });
  });

  it('a request without traceparent starts a trace; a malformed one is ignored', async () => {
    for (const traceparent of [
      undefined,
      'garbage',
      `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`,
      `ff-${TRACE_ID}-${CALLER_SPAN}-01`,
    ]) {
      const r = await post(
        base,
        `/stores/${store}/check`,
        { tuple_key: { user: 'user:bob', relation: 'viewer', object: 'doc:1' } },
        traceparent ? { traceparent } : {},
      );
      expect(await r.json()).toEqual({ allowed: false, resolution: '' });
      const back = r.headers.get('traceparent') ?? '';
      expect(back).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      const traceId = back.split('-')[1] as string;
      expect(traceId).not.toBe(TRACE_ID);
      const spans = await traceOf(traceId);
      expect(byName(spans, 'POST /stores/{store_id}/check').parentSpanContext).toBeUndefined();
      expect(byName(spans, 'latch.engine.check').attributes['latch.allowed']).toBe(false);
    }
  });

  it('an error marks the operation span and the request span carries the status', async () => {
    const unknown = '01J5Y0M8Q3ZKX7T9B2C4D6F8GH';
    const r = await post(base, `/stores/${unknown}/check`, {
      tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
    });
    expect(r.status).toBe(404);
    const traceId = (r.headers.get('traceparent') ?? '').split('-')[1] as string;
    const spans = await traceOf(traceId);
    expect(byName(spans, 'POST /stores/{store_id}/check').attributes).toMatchObject({
      'http.response.status_code': 404,
      'latch.error_code': 'store_id_not_found',
    });
    expect(byName(spans, 'latch.Check').status).toMatchObject({ code: 2 });
  });

  it('tracing: false keeps a server silent even with an SDK', async () => {
    const quiet = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory', tracing: false });
    try {
      const before = exporter.getFinishedSpans().length;
      const r = await fetch(`http://127.0.0.1:${quiet.port}/stores`);
      expect(r.status).toBe(200);
      expect(r.headers.get('traceparent')).toBeNull();
      expect(exporter.getFinishedSpans().length).toBe(before);
    } finally {
      await quiet.close();
    }
  });
});
