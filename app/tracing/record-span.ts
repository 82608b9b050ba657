/**
 * A finished span as the exporters read it (the SDK's `ReadableSpan`), made in one step when a
 * record ends: plain fields, attributes built once by spans.ts, no SDK `Span` in between. The
 * SDK's span checks and copies every attribute, reads `Date.now()` and `performance.now()` on
 * start and end, and goes through the context API and a sampler; none of that is needed for a
 * span whose whole life is already known (docs/tracing.md "Cost").
 */
import type { Attributes, HrTime, Link, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';

// Named through ReadableSpan: @opentelemetry/core is not a direct dependency.
type Resource = ReadableSpan['resource'];
type InstrumentationScope = ReadableSpan['instrumentationScope'];

/** What every span of one tracer shares: its resource and instrumentation scope. */
export interface SpanOrigin {
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
}

const NO_LINKS: Link[] = [];
const NO_EVENTS: TimedEvent[] = [];
const UNSET: SpanStatus = { code: 0 };

/** `ms` (a `performance.now()` reading) as the wall-clock `HrTime` it was, given `offset` = wall − performance ms. */
export function hrTimeOf(ms: number, offset: number): HrTime {
  const wall = ms + offset;
  let seconds = Math.floor(wall / 1000);
  let nanos = Math.round((wall - seconds * 1000) * 1e6);
  if (nanos >= 1e9) {
    seconds++;
    nanos -= 1e9;
  }
  return [seconds, nanos];
}

/** One ended span. */
export class RecordSpan implements ReadableSpan {
  readonly name: string;
  readonly kind: SpanKind;
  /** Absent on a root span (as the SDK's spans have it). */
  declare readonly parentSpanContext?: SpanContext;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  status: SpanStatus = UNSET;
  readonly attributes: Attributes;
  readonly links: Link[] = NO_LINKS;
  events: TimedEvent[] = NO_EVENTS;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly ended = true;
  readonly #context: SpanContext;

  constructor(
    origin: SpanOrigin,
    context: SpanContext,
    parent: SpanContext | undefined,
    name: string,
    kind: SpanKind,
    startTime: HrTime,
    endTime: HrTime,
    attributes: Attributes,
  ) {
    this.#context = context;
    if (parent !== undefined) (this as { parentSpanContext?: SpanContext }).parentSpanContext = parent;
    this.name = name;
    this.kind = kind;
    this.startTime = startTime;
    this.endTime = endTime;
    this.attributes = attributes;
    this.resource = origin.resource;
    this.instrumentationScope = origin.instrumentationScope;
  }

  spanContext(): SpanContext {
    return this.#context;
  }

  /** End − start (read by some exporters; the OTLP ones use the two times). */
  get duration(): HrTime {
    const [s, n] = this.endTime;
    const [s0, n0] = this.startTime;
    return n >= n0 ? [s - s0, n - n0] : [s - s0 - 1, n - n0 + 1e9];
  }
}
