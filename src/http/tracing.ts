// OpenTelemetry tracing through `@opentelemetry/api` (the only importer): a SERVER span per HTTP
// request (W3C `traceparent`/`tracestate` in, `traceparent` of the server span out), an INTERNAL
// span per API operation, and one per engine query (store id, model id, operation, allowed,
// resolution depth). Nothing is done unless a tracer provider other than the API's no-op one is
// registered when the server starts (the user installs an SDK); otherwise `openTracing` returns
// undefined and the request path keeps a single `undefined` check (docs/operations.md).

import {
  context,
  createTraceState,
  isSpanContextValid,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { Latch } from '../engine/contract.js';
import { checkDepths } from '../engine/stats.js';

export type { Span } from '@opentelemetry/api';

/** The request headers tracing reads, read inside the uWS callback. */
interface TraceHeaders {
  readonly traceparent: string;
  readonly tracestate: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The caller's span context from W3C Trace Context headers, parsed here rather than through the
 * global propagator so that `traceparent` works with any SDK setup. Version ff, a future version
 * with a wrong length, all-zero ids or a malformed value: no parent (a new trace starts).
 */
function parentOf(h: TraceHeaders): Context {
  const m = TRACEPARENT.exec(h.traceparent.trim().toLowerCase());
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined)) return ROOT_CONTEXT;
  const sc: SpanContext = {
    traceId: m[2] as string,
    spanId: m[3] as string,
    traceFlags: parseInt(m[4] as string, 16) & 1,
    isRemote: true,
  };
  if (!isSpanContextValid(sc)) return ROOT_CONTEXT;
  const state = h.tracestate.trim();
  return trace.setSpanContext(ROOT_CONTEXT, state ? { ...sc, traceState: createTraceState(state) } : sc);
}

/** What the HTTP layer calls when tracing is on. */
export interface Tracing {
  /** The SERVER span of one HTTP request, child of the caller's `traceparent` when valid. */
  request(method: string, route: string, headers: TraceHeaders): Span;
  /** The `traceparent` value naming `span` (sent back on the reply). */
  traceparent(span: Span): string;
  /** Ends the request span with its status. */
  endRequest(span: Span, status: number, errorCode: string): void;
  /** Runs `fn` inside an INTERNAL span for API operation `name`, child of `parent`. */
  operation<T>(parent: Span | undefined, name: string, storeId: string | undefined, fn: (span: Span) => T): T;
  /** The service with one INTERNAL span per engine query, parented by the active context. */
  readonly latch: Latch;
}

/**
 * The API's own no-op provider: what its proxy hands out until an SDK registers one. The API does
 * not export it; a fresh proxy with no delegate returns the module's single instance.
 */
const NOOP_PROVIDER: unknown = new ProxyTracerProvider().getDelegate();

/**
 * True when a real tracer provider is registered (the API's global is a proxy over a no-op one).
 * Compared by identity with the API's instance, and by class name for a no-op provider that
 * another copy of the API registered. The name alone is not enough: the HTTP threads' one-file
 * bundle (scripts/bundle-thread.mjs) is minified, its class names are not the API's, and every
 * thread took the no-op provider for an SDK (a no-op span per request, and an all-zero
 * `traceparent` on every reply).
 */
function providerInstalled(): boolean {
  const provider = trace.getTracerProvider() as { getDelegate?: () => unknown };
  const delegate = (typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider) as
    object | null | undefined;
  return (
    delegate !== null &&
    delegate !== undefined &&
    delegate !== NOOP_PROVIDER &&
    delegate.constructor.name !== 'NoopTracerProvider'
  );
}

/** Tracing for a server, or undefined when no SDK is installed (then nothing is traced). */
export function openTracing(latch: Latch): Tracing | undefined {
  if (!providerInstalled()) return undefined;
  const tracer = trace.getTracer('latch');
  return {
    request(method, route, headers) {
      const parent = headers.traceparent ? parentOf(headers) : ROOT_CONTEXT;
      return tracer.startSpan(
        `${method} ${route}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route } },
        parent,
      );
    },
    traceparent(span) {
      const c = span.spanContext();
      return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 1) === 1 ? '01' : '00'}`;
    },
    endRequest(span, status, errorCode) {
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode });
      if (errorCode) span.setAttribute('latch.error_code', errorCode);
      span.end();
    },
    operation(parent, name, storeId, fn) {
      const ctx = parent ? trace.setSpan(ROOT_CONTEXT, parent) : context.active();
      const span = tracer.startSpan(
        `latch.${name}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: { 'latch.operation': name, ...(storeId ? { 'latch.store_id': storeId } : {}) },
        },
        ctx,
      );
      return context.with(trace.setSpan(ctx, span), () => ended(span, () => fn(span)));
    },
    latch: tracedLatch(latch, tracer),
  };
}

/** Ends `span` when `fn` (or the promise it returns) settles; an error marks it and is rethrown. */
function ended<T>(span: Span, fn: () => T): T {
  const fail = (err: unknown): never => {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    span.end();
    throw err;
  };
  let out: T;
  try {
    out = fn();
  } catch (err) {
    return fail(err);
  }
  if (out instanceof Promise) {
    return out.then((v: unknown) => {
      span.end();
      return v;
    }, fail) as T;
  }
  span.end();
  return out;
}

type Query =
  | 'check'
  | 'checkSync'
  | 'batchCheck'
  | 'checkIds'
  | 'listObjects'
  | 'listUsers'
  | 'expand'
  | 'write'
  | 'read'
  | 'readChanges';
const QUERIES: readonly Query[] = [
  'check',
  'checkSync',
  'batchCheck',
  'checkIds',
  'listObjects',
  'listUsers',
  'expand',
  'write',
  'read',
  'readChanges',
];

/** Attributes a query's result adds to its span: the model, and a Check's answer and depth. */
function annotate(span: Span, q: Query, result: unknown, depthsBefore: number): void {
  if (typeof result !== 'object' || result === null) return;
  const r = result as { modelId?: unknown; allowed?: unknown };
  if (typeof r.modelId === 'string') span.setAttribute('latch.model_id', r.modelId);
  if ((q === 'check' || q === 'checkSync') && typeof r.allowed === 'boolean') {
    span.setAttribute('latch.allowed', r.allowed);
    // The walker records each main-thread Check's deepest hop; none when the cache answered.
    if (checkDepths.count === depthsBefore + 1) span.setAttribute('latch.resolution_depth', checkDepths.last);
  }
}

/** `latch` with a span around every query method; everything else is the service itself. */
function tracedLatch(latch: Latch, tracer: Tracer): Latch {
  const wrapped = new Map<PropertyKey, unknown>();
  for (const q of QUERIES) {
    const method = latch[q] as ((input: { storeId: string; modelId?: string | undefined }) => unknown) | undefined;
    if (typeof method !== 'function') continue;
    wrapped.set(q, (input: { storeId: string; modelId?: string | undefined }) => {
      const span = tracer.startSpan(
        `latch.engine.${q}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: { 'latch.operation': q, ...(input.storeId ? { 'latch.store_id': input.storeId } : {}) },
        },
        context.active() as Context,
      );
      if (input.modelId) span.setAttribute('latch.model_id', input.modelId);
      const before = checkDepths.count;
      return ended(span, () => {
        const out = method.call(latch, input);
        if (out instanceof Promise) return out.then((v: unknown) => (annotate(span, q, v, before), v));
        annotate(span, q, out, before);
        return out;
      });
    });
  }
  return new Proxy(latch, {
    get(target, prop) {
      if (wrapped.has(prop)) return wrapped.get(prop);
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
