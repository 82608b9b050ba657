/**
 * The tracing counters on `/metrics` (issue 44, docs/tracing.md), read from the running tracer
 * at each scrape: spans exported, dropped (queue full) and failed (the endpoint refused or timed
 * out), and the queue's length now. With the worker panel each thread runs its own tracer: the
 * threads' counts, as they last reported them, are added to the main thread's.
 */
import { Gauge, type Registry } from 'prom-client';
import { reportsThreadTracers, type TracerStats } from '../../src/tracing/tracer.ts';

/** Registers the `switchboard_tracing_*` metrics on `registry`, read from `own` plus `panel`'s threads when it reports them. */
export function registerTracingMetrics(registry: Registry, own: TracerStats, panel?: object): void {
  const threads = panel !== undefined && reportsThreadTracers(panel) ? panel : undefined;
  const stats: TracerStats =
    threads === undefined
      ? own
      : {
          get exported() {
            return own.exported + threads.threadTracerCounts().exported;
          },
          get dropped() {
            return own.dropped + threads.threadTracerCounts().dropped;
          },
          get failed() {
            return own.failed + threads.threadTracerCounts().failed;
          },
          get queued() {
            return own.queued + threads.threadTracerCounts().queued;
          },
        };
  const counter = (name: string, help: string, read: () => number): void => {
    // A gauge collected from the tracer's own count: prom-client counters cannot be set.
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  };
  counter('switchboard_tracing_spans_exported_total', 'Spans the OTLP endpoint accepted.', () => stats.exported);
  counter(
    'switchboard_tracing_spans_dropped_total',
    'Spans dropped because the export queue was full.',
    () => stats.dropped,
  );
  counter(
    'switchboard_tracing_spans_failed_total',
    'Spans whose export failed (refused or timed out).',
    () => stats.failed,
  );
  counter('switchboard_tracing_queue_spans', 'Spans waiting for export.', () => stats.queued);
}
