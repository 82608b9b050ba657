/**
 * The tracing part of a router's start (app/start.ts): nothing when `tracing:` is absent (no
 * OpenTelemetry module is loaded); otherwise app/tracing/start.ts by `import()`.
 */
import type { TracingConfig } from '../../src/config/tracing.ts';
import type { RunningTracing } from './start.ts';

/** Starts tracing when `config` is set; undefined otherwise. */
export async function startTracingPart(config: TracingConfig | undefined): Promise<RunningTracing | undefined> {
  if (config === undefined) return undefined;
  const { startTracing } = await import('./start.ts');
  return startTracing(config);
}
