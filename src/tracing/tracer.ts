/**
 * The tracing hook of the core: what the panels' access records tell a tracer, and the one
 * place a tracer is installed. The core never imports OpenTelemetry; app/tracing/ implements
 * `Tracer` with it and installs one only when `tracing:` is configured.
 *
 * 1. `describeRequest` (data-path/access-record.ts) and the net panel's `Exchange` call
 *    `begin(record, request)` once the request is known: the tracer reads the inbound
 *    `traceparent` from the request's peeked head (never written back) and decides sampling.
 * 2. The panels call `responded(record)` when a response head comes back from the backend (the
 *    net panel's per-request exchanges, the http2 panel's streams): the attempt's CLIENT span ends there.
 * 3. `logRequest` / `logConnection` call `end(record)` before the line is written: the tracer
 *    makes the spans from what it collected and sets the record's `trace_id` / `span_id`.
 * 4. Off (nothing installed), each of those costs one property read of `tracing.current`.
 *
 * The hook is process-wide (per thread), like the diagnostics channels: one tracer at a time.
 */
import type { AccessRecord } from '../base/log.ts';
import type { Request } from '../contracts/types.ts';

/** What the core tells a tracer about each access record. */
export interface Tracer {
  /**
   * `record` now belongs to `request`: its inbound trace context and the attempts made for it.
   * `fields`: the request's field lines as sent (an HTTP/1 head's), when the caller has them: a
   * head without `traceparent` in it then costs no header lookup.
   */
  begin(record: AccessRecord, request: Request, fields?: string): void;
  /** The first response byte (a response head) for `record`'s current upstream attempt came back. */
  responded(record: AccessRecord): void;
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

/** A snapshot of `TracerStats` (what a worker thread posts to the main thread). */
export type TracerCounts = { readonly [K in keyof TracerStats]: number };

/** `stats` now, as plain numbers. */
export function tracerCounts(stats: TracerStats): TracerCounts {
  return { exported: stats.exported, dropped: stats.dropped, failed: stats.failed, queued: stats.queued };
}

/**
 * A panel whose threads run their own tracers (the worker panel): their counts as last reported,
 * summed, so `/metrics` counts every thread's spans with the main thread's.
 */
export interface ThreadTracerCounts {
  threadTracerCounts(): TracerCounts;
}

/** Whether `panel` reports its threads' tracer counts. */
export function reportsThreadTracers(panel: object): panel is ThreadTracerCounts {
  return typeof (panel as Partial<ThreadTracerCounts>).threadTracerCounts === 'function';
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
