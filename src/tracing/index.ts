export type { ParentSpan } from './traceparent.ts';
export { parseTraceparent } from './traceparent.ts';
export type { Tracer, TracerStats } from './tracer.ts';
export { installTracer, tracing } from './tracer.ts';
