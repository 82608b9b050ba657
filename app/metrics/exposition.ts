/**
 * The two expositions of `GET /metrics`: the Prometheus text format (the default) and, when the
 * scraper asks for it (`Accept: application/openmetrics-text`), OpenMetrics — the format that
 * carries exemplars (the trace ids on switchboard_backend_request_duration_seconds, with
 * `tracing:`; docs/tracing.md).
 *
 * prom-client formats a registry in the one content type the registry is set to, and its
 * OpenMetrics pass renames counters in place (`x_total` → `x`). So an OpenMetrics scrape sets the
 * type, formats, and puts the type and the counter names back; scrapes run one after another so
 * a Prometheus scrape never sees the registry mid-switch.
 */
import { Registry } from 'prom-client';

/** A formatted exposition and its content type. */
export interface Exposition {
  readonly body: string;
  readonly contentType: string;
}

/** Whether an `Accept` header asks for OpenMetrics. */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  return accept?.includes('application/openmetrics-text') === true;
}

const chains = new WeakMap<Registry, Promise<unknown>>();

/** Formats `registry` as OpenMetrics when `openMetrics`, else as Prometheus text. */
export function exposition(registry: Registry, openMetrics: boolean): Promise<Exposition> {
  const run = async (): Promise<Exposition> => {
    if (!openMetrics) return { body: await registry.metrics(), contentType: registry.contentType };
    const metrics = registry.getMetricsAsArray() as unknown as { name: string }[];
    const names = metrics.map((m) => m.name);
    // The registry's type parameter pins Prometheus text; the switch is undone below.
    const switchable = registry as unknown as { setContentType(type: string): void };
    switchable.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    try {
      return { body: await registry.metrics(), contentType: Registry.OPENMETRICS_CONTENT_TYPE };
    } finally {
      switchable.setContentType(Registry.PROMETHEUS_CONTENT_TYPE);
      metrics.forEach((m, i) => {
        m.name = names[i]!;
      });
    }
  };
  const next = (chains.get(registry) ?? Promise.resolve()).then(run, run);
  chains.set(
    registry,
    next.catch(() => {}),
  );
  return next;
}
