/**
 * The schema of the top-level `tracing:` section (issue 44, docs/tracing.md): OpenTelemetry spans
 * exported over OTLP/HTTP. Absent: no tracing, and no OpenTelemetry module is loaded.
 *
 *   tracing:
 *     endpoint: http://127.0.0.1:4318/v1/traces
 *     protocol: http/protobuf          # or http/json
 *     serviceName: switchboard
 *     sampler: { ratio: 0.01 }         # for requests without a parent; a parent's flag decides
 *
 * The config only declares it; app/tracing/ runs it.
 */
import { z } from 'zod';
import { duration } from './duration.ts';

/** `tracing.sampler`: the share of requests without an inbound `traceparent` that are traced. */
const samplerSchema = z.strictObject({
  ratio: z.number().min(0).max(1).default(0.01),
});

/** `tracing:`: where spans go, how they are named, sampled and batched. */
export const tracingSchema = z.strictObject({
  /** The OTLP/HTTP traces URL of a collector, e.g. http://127.0.0.1:4318/v1/traces. */
  endpoint: z
    .string()
    .regex(/^https?:\/\/[^/\s]+(\/\S*)?$/, 'expected an OTLP/HTTP URL like http://127.0.0.1:4318/v1/traces'),
  /** The OTLP encoding: protobuf (the collector's default) or JSON. */
  protocol: z.enum(['http/protobuf', 'http/json']).default('http/protobuf'),
  /** Headers sent with every export (a collector's auth token, a tenant). */
  headers: z.record(z.string().min(1), z.string()).default({}),
  /** The `service.name` resource attribute. */
  serviceName: z.string().min(1).default('switchboard'),
  /** More resource attributes (`deployment.environment`, `service.instance.id`, …). */
  resourceAttributes: z.record(z.string().min(1), z.string()).default({}),
  sampler: samplerSchema.default({ ratio: 0.01 }),
  /** Spans sent in one export request at most. */
  batchSize: z.number().int().min(1).max(65536).default(512),
  /** Spans waiting for export at most; more are dropped and counted (never an unbounded queue). */
  queueSize: z.number().int().min(1).max(1048576).default(2048),
  /** How long spans may wait before a partial batch is sent. */
  flushInterval: duration.default(5000),
  /** How long one export may take; then it counts as failed and the next batch goes. */
  exportTimeout: duration.default(10000),
});

/** The parsed `tracing:` section. */
export type TracingConfig = z.infer<typeof tracingSchema>;
