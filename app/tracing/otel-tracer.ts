/**
 * The `Tracer` of src/tracing/ with OpenTelemetry (loaded only when `tracing:` is set):
 *
 * 1. `begin(record, request, fields)`: reads `traceparent` / `tracestate` from the request's peeked head
 *    (src/tracing/traceparent.ts, strict; a bad one is ignored). A parent decides sampling by its
 *    flag (unsampled: only that decision is kept, for the last request); without one the ratio decides. A
 *    sampled record is remembered by record and by request (WeakMaps: a record never ended is
 *    simply forgotten).
 *    In per-request mode the connection's record hands its request to the first exchange's record,
 *    so a request gets one SERVER span, not two.
 * 2. Attempts: the upstream loop publishes each try on `switchboard:upstream:attempt` (with its
 *    request) right after the dial's `switchboard:upstream:connect` (with its latency); the two
 *    messages of one try are paired by backend and attempt number.
 *    `responded(record)` (a response head came back) marks the last attempt's first response byte.
 * 3. `end(record)`: the spans are made from what was kept (spans.ts) and queued for export
 *    (bounded-processor.ts); `trace_id` / `span_id` go on the record before its line is written.
 *
 * An unsampled request costs the sampling draw and, only when its head holds the text
 * `traceparent` (or the caller has no head text to look in), a header lookup; nothing is kept.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { channels } from '../../src/base/diagnostics.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import type { Backend, Request } from '../../src/contracts/types.ts';
import { parseTraceparent } from '../../src/tracing/traceparent.ts';
import type { Tracer } from '../../src/tracing/tracer.ts';
import { emitSpans, type RecordTrace, type SpanOutput } from './spans.ts';

interface AttemptMessage {
  readonly request: Request;
  readonly attempt: number;
  readonly result: string;
  readonly backend?: Backend;
  readonly subcluster?: string;
  readonly error?: string;
}

interface ConnectMessage {
  readonly backend: Backend;
  readonly attempt: number;
  readonly latencyMs: number;
}

/** A field-lines text that may hold `traceparent` (any case); one that cannot is not split into headers. */
const MAY_HAVE_TRACEPARENT = /traceparent/i;

/** Spans for every sampled access record, made at its end and handed to `out`. */
export class OtelRecordTracer implements Tracer {
  readonly #out: SpanOutput;
  readonly #ratio: number;
  readonly #random: () => number;
  readonly #byRecord = new WeakMap<AccessRecord, RecordTrace>();
  readonly #byRequest = new WeakMap<Request, { record: AccessRecord; trace: RecordTrace }>();
  /** The last request whose sampling decision was no. */
  #lastUnsampled: Request | undefined;
  /** The last dial reported, paired with the attempt message that follows it in the same tick. */
  #lastConnect: ConnectMessage | undefined;
  readonly #onConnect = (m: unknown): void => {
    this.#lastConnect = m as ConnectMessage;
  };
  readonly #onAttempt = (m: unknown): void => this.#attempt(m as AttemptMessage);

  /** `ratio`: the share of requests without a parent that are traced; `random` for tests. */
  constructor(out: SpanOutput, ratio: number, random: () => number = Math.random) {
    this.#out = out;
    this.#ratio = ratio;
    this.#random = random;
    subscribe(channels.upstreamConnect.name, this.#onConnect);
    subscribe(channels.upstreamAttempt.name, this.#onAttempt);
  }

  begin(record: AccessRecord, request: Request, fields?: string): void {
    if (request === this.#lastUnsampled) return; // decided already, for the connection's record
    const before = this.#byRequest.get(request);
    if (before !== undefined) {
      // The connection's record hands the request to its first exchange (per-request mode).
      this.#byRecord.delete(before.record);
      this.#byRecord.set(record, before.trace);
      this.#byRequest.set(request, { record, trace: before.trace });
      return;
    }
    // Without the field, the request's header index (a Map of every field) is never built.
    const parent =
      fields !== undefined && !MAY_HAVE_TRACEPARENT.test(fields)
        ? undefined
        : parseTraceparent(request.header('traceparent'));
    if (parent !== undefined ? !parent.sampled : this.#random() >= this.#ratio) {
      // Remembered so the first exchange of a per-request connection, which begins right after
      // its connection's record with the same request, does not draw again. One slot, not a
      // WeakMap entry per request: ephemerons make every unsampled request cost the GC.
      this.#lastUnsampled = request;
      return;
    }
    const trace: RecordTrace = {
      parent,
      tracestate: parent === undefined ? undefined : request.header('tracestate'),
      sni: request.sni,
      clientIp: request.clientIp,
      clientPort: request.clientPort,
      attempts: undefined,
    };
    this.#byRecord.set(record, trace);
    this.#byRequest.set(request, { record, trace });
  }

  end(record: AccessRecord): void {
    const trace = this.#byRecord.get(record);
    if (trace === undefined) return;
    this.#byRecord.delete(record);
    emitSpans(this.#out, record, trace, performance.now());
  }

  responded(record: AccessRecord): void {
    const attempts = this.#byRecord.get(record)?.attempts;
    if (attempts === undefined) return;
    const last = attempts[attempts.length - 1]!;
    last.respondedAt ??= performance.now();
  }

  /** Stops listening to the upstream channels. */
  close(): void {
    unsubscribe(channels.upstreamConnect.name, this.#onConnect);
    unsubscribe(channels.upstreamAttempt.name, this.#onAttempt);
  }

  #attempt(m: AttemptMessage): void {
    const connect = this.#lastConnect;
    this.#lastConnect = undefined;
    if (m.backend === undefined) return; // an operator refusal: no backend was tried
    const kept = this.#byRequest.get(m.request);
    if (kept === undefined) return;
    const dialled = connect !== undefined && connect.backend.id === m.backend.id && connect.attempt === m.attempt;
    kept.trace.attempts ??= [];
    kept.trace.attempts.push({
      number: m.attempt,
      backend: m.backend,
      subcluster: m.subcluster,
      at: performance.now(),
      dialMs: dialled ? connect.latencyMs : 0,
      result: m.result,
      error: m.error,
      respondedAt: undefined,
    });
  }
}
