/**
 * The tracing counters on `/metrics` (issue 44, docs/tracing.md), read from the running tracer
 * at each scrape: spans exported, dropped (queue full) and failed (the endpoint refused or timed
 * out), and the queue's length now.
 */
import { Gauge, type Registry } from 'prom-client';
import type { TracerStats } from '../../src/tracing/tracer.ts';

/** Registers the `switchboard_tracing_*` metrics on `registry`, read from `stats`. */
export function registerTracingMetrics(registry: Registry, stats: TracerStats): void {
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
