export type { ParentSpan } from './traceparent.ts';
export { parseTraceparent } from './traceparent.ts';
export type { ThreadTracerCounts, Tracer, TracerCounts, TracerStats } from './tracer.ts';
export { installTracer, reportsThreadTracers, tracerCounts, tracing } from './tracer.ts';
