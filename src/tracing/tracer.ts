/**
 * The tracing hook of the core: what the panels' access records tell a tracer, and the one
 * place a tracer is installed. The core never imports OpenTelemetry; app/tracing/ implements
 * `Tracer` with it and installs one only when `tracing:` is configured.
 *
 * 1. `describeRequest` (data-path/access-record.ts) and the net panel's `Exchange` call
 *    `begin(record, request)` once the request is known: the tracer reads the inbound
 *    `traceparent` from the request's peeked head (never written back) and decides sampling.
 * 2. `logRequest` / `logConnection` call `end(record)` before the line is written: the tracer
 *    makes the spans from what it collected and sets the record's `trace_id` / `span_id`.
 * 3. Off (nothing installed), each of those costs one property read of `tracing.current`.
 *
 * The hook is process-wide (per thread), like the diagnostics channels: one tracer at a time.
 */
import type { AccessRecord } from '../base/log.ts';
import type { Request } from '../contracts/types.ts';

/** What the core tells a tracer about each access record. */
export interface Tracer {
  /** `record` now belongs to `request`: its inbound trace context and the attempts made for it. */
  begin(record: AccessRecord, request: Request): void;
  /** `record` has ended: make its spans and set `trace_id` / `span_id` on it when sampled. */
  end(record: AccessRecord): void;
}

/** What a tracer counts, for `/metrics` (app/metrics/tracing.ts). */
export interface TracerStats {
  /** Spans handed to the exporter and accepted by the endpoint. */
  readonly exported: number;
  /** Spans dropped because the queue was full (the endpoint down or slow). */
  readonly dropped: number;
  /** Spans whose export failed (the endpoint refused or did not answer in time). */
  readonly failed: number;
  /** Spans waiting in the queue now. */
  readonly queued: number;
}

/** The installed tracer of this thread; undefined (tracing off) unless `tracing:` is configured. */
export const tracing: { current: Tracer | undefined } = { current: undefined };

/** Installs `tracer`; the function returned uninstalls it (if it is still the one installed). */
export function installTracer(tracer: Tracer): () => void {
  tracing.current = tracer;
  return () => {
    if (tracing.current === tracer) tracing.current = undefined;
  };
}
