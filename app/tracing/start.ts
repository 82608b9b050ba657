/**
 * Starts tracing for a `tracing:` section: the exporter (OTLP/HTTP, protobuf or JSON), the
 * bounded processor, the service's resource (made once), and the record tracer installed as this
 * thread's `tracing.current`. This module imports OpenTelemetry: it is loaded with `import()`
 * (app/tracing/part.ts) only when `tracing:` is configured. No SDK `TracerProvider` is made: the
 * record tracer makes finished spans itself (record-span.ts) and hands them to the processor.
 */
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../../src/config/tracing.ts';
import { installTracer, type TracerStats } from '../../src/tracing/tracer.ts';
import { BoundedProcessor } from './bounded-processor.ts';
import { RandomIds } from './ids.ts';
import { OtelRecordTracer } from './otel-tracer.ts';
import type { SpanOutput } from './spans.ts';

/** Running tracing: its counts, and its close (flushes what waits, within the export timeout). */
export interface RunningTracing {
  readonly stats: TracerStats;
  close(): Promise<void>;
}

/** Starts tracing for `config`; `exporter` replaces the OTLP one (tests: an in-memory exporter). */
export function startTracing(config: TracingConfig, exporter?: SpanExporter): RunningTracing {
  const options = {
    url: config.endpoint,
    headers: config.headers,
    timeoutMillis: config.exportTimeout,
    concurrencyLimit: 1,
  };
  const spans = exporter ?? (config.protocol === 'http/json' ? new JsonExporter(options) : new ProtoExporter(options));
  const processor = new BoundedProcessor(spans, config);
  const out: SpanOutput = {
    origin: {
      resource: resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName }),
      instrumentationScope: { name: 'switchboard' },
    },
    ids: new RandomIds(),
    onEnd: (span: ReadableSpan) => processor.onEnd(span),
  };
  // Sampling is decided at `begin` (the parent's flag, else the ratio): every span made is kept.
  const tracer = new OtelRecordTracer(out, config.sampler.ratio);
  const uninstall = installTracer(tracer);
  return {
    stats: processor,
    async close() {
      uninstall();
      tracer.close();
      await processor.shutdown();
    },
  };
}
