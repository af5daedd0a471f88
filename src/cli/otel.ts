// `latch serve --otel-exporter otlp|console`: starts the OpenTelemetry SDK before the server, so
// that src/http/tracing.ts finds a registered tracer provider (docs/operations.md, "Tracing").
// The SDK packages are not dependencies of latch: they are imported only when an exporter is
// chosen, and a missing one is a start-up error that names the `npm install` line. With the
// default `none` nothing is imported and the request path is unchanged.

import { hostname } from 'node:os';

export type OtelExporter = 'none' | 'otlp' | 'console';

export interface OtelSettings {
  readonly exporter: OtelExporter;
  /** OTLP/HTTP traces URL; undefined: the exporter's default (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly endpoint?: string | undefined;
  readonly serviceName: string;
  readonly serviceVersion: string;
}

export interface Telemetry {
  /** Flushes the spans still queued and stops the SDK. */
  shutdown(): Promise<void>;
}

/** The packages each exporter needs, for the error message and docs/operations.md. */
function otelPackages(exporter: Exclude<OtelExporter, 'none'>): string[] {
  const base = ['@opentelemetry/sdk-trace-base', '@opentelemetry/context-async-hooks', '@opentelemetry/resources'];
  return exporter === 'otlp' ? [...base, '@opentelemetry/exporter-trace-otlp-http'] : base;
}

class OtelMissingError extends Error {}

// Minimal shapes of what is used from the SDK packages (they are optional, so not typed here).
interface SdkTraceBase {
  BasicTracerProvider: new (o: { resource: unknown; spanProcessors: unknown[] }) => {
    shutdown(): Promise<void>;
  };
  BatchSpanProcessor: new (exporter: unknown) => unknown;
  SimpleSpanProcessor: new (exporter: unknown) => unknown;
  ConsoleSpanExporter: new () => unknown;
}
interface Resources {
  resourceFromAttributes(a: Record<string, string>): { merge(o: unknown): unknown };
  detectResources(o: { detectors: unknown[] }): unknown;
  envDetector: unknown;
}

async function load<T>(name: string, missing: string[]): Promise<T | undefined> {
  try {
    return (await import(name)) as T;
  } catch {
    missing.push(name);
    return undefined;
  }
}

/** Starts the SDK for `o.exporter`; undefined for `none`. Throws OtelMissingError naming what to install. */
export async function startTelemetry(o: OtelSettings): Promise<Telemetry | undefined> {
  if (o.exporter === 'none') return undefined;
  const missing: string[] = [];
  const api = await import('@opentelemetry/api');
  const sdk = await load<SdkTraceBase>('@opentelemetry/sdk-trace-base', missing);
  const hooks = await load<{ AsyncLocalStorageContextManager: new () => { enable(): unknown } }>(
    '@opentelemetry/context-async-hooks',
    missing,
  );
  const resources = await load<Resources>('@opentelemetry/resources', missing);
  const otlp =
    o.exporter === 'otlp'
      ? await load<{ OTLPTraceExporter: new (c: { url?: string }) => unknown }>(
          '@opentelemetry/exporter-trace-otlp-http',
          missing,
        )
      : undefined;
  if (!sdk || !hooks || !resources || (o.exporter === 'otlp' && !otlp)) {
    throw new OtelMissingError(
      `--otel-exporter ${o.exporter} needs the OpenTelemetry SDK packages, not installed: ${missing.join(', ')}. ` +
        `Install them next to latch: npm install ${otelPackages(o.exporter).join(' ')} (add -g for a global latch)`,
    );
  }
  const resource = resources
    .resourceFromAttributes({
      'service.name': o.serviceName,
      'service.version': o.serviceVersion,
      'service.instance.id': `${hostname()}:${process.pid}`,
    })
    // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME win over the defaults above.
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const processor = otlp
    ? new sdk.BatchSpanProcessor(new otlp.OTLPTraceExporter(o.endpoint ? { url: o.endpoint } : {}))
    : new sdk.SimpleSpanProcessor(new sdk.ConsoleSpanExporter());
  const provider = new sdk.BasicTracerProvider({ resource, spanProcessors: [processor] });
  api.context.setGlobalContextManager(
    new hooks.AsyncLocalStorageContextManager().enable() as Parameters<typeof api.context.setGlobalContextManager>[0],
  );
  api.trace.setGlobalTracerProvider(provider as unknown as Parameters<typeof api.trace.setGlobalTracerProvider>[0]);
  return { shutdown: () => provider.shutdown() };
}
