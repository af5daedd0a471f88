// The latch server of bench/http/serve.ts with an OpenTelemetry SDK registered first: every span
// is recorded (always-on sampling) and handed to a batch processor whose exporter drops it, so
// the figure is latch's tracing work plus the SDK's own, without any network exporter. The
// context manager is the AsyncLocalStorage one (what NodeSDK installs, docs/operations.md).

import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

let exported = 0;
const discard: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: async () => undefined,
};
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(discard, { maxQueueSize: 65536, maxExportBatchSize: 4096 })],
  }),
);
process.once('exit', () => process.stderr.write(JSON.stringify({ spansExported: exported }) + '\n'));

await import('./serve.js');
