/**
 * What a traced record collected (its parent, its attempts) and the spans made from it at its
 * end, named and attributed by the OpenTelemetry semantic conventions (HTTP and network spans):
 *
 *   caller's span (inbound traceparent, or none: a new root)
 *     └─ SERVER  "GET" / "tls …"   listener, product, cluster, backend, policy, switchboard.result
 *          ├─ CLIENT "connect" attempt 1  backend 10.0.0.1:8080  (refused: status Error)
 *          └─ CLIENT "GET"     attempt 2  backend 10.0.0.2:8080  (event connected; ends at the first response byte)
 *
 * Spans are made when the record ends, with the times measured while it ran, as finished
 * `RecordSpan`s handed straight to the processor: nothing of OpenTelemetry runs while the request
 * is in flight, and no SDK `Span` is made at all (record-span.ts).
 */
import { type Attributes, createTraceState, type SpanContext, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { AccessRecord } from '../../src/base/log.ts';
import type { Backend } from '../../src/contracts/types.ts';
import type { ParentSpan } from '../../src/tracing/traceparent.ts';
import type { RandomIds } from './ids.ts';
import { hrTimeOf, RecordSpan, type SpanOrigin } from './record-span.ts';

/** One upstream attempt: which backend, when it ended (`performance.now()`), its dial time and outcome. */
export interface AttemptTrace {
  readonly number: number;
  readonly backend: Backend;
  readonly subcluster: string | undefined;
  /** When the attempt's outcome was known: connected (or a pooled connection picked), or failed. */
  readonly at: number;
  /** Milliseconds the dial (TCP, TLS) took; 0 when a pooled connection or stream was used. */
  readonly dialMs: number;
  readonly result: string;
  readonly error: string | undefined;
  /** When the first response byte (a response head) came back; undefined until then. */
  respondedAt: number | undefined;
}

/** A sampled record's trace: its parent (undefined: a new root) and its attempts. */
export interface RecordTrace {
  readonly parent: ParentSpan | undefined;
  readonly tracestate: string | undefined;
  readonly sni: string | undefined;
  /** The request's client as routing saw it (the record's `client`, unsplit). */
  readonly clientIp: string;
  readonly clientPort: number;
  attempts: AttemptTrace[] | undefined;
}

/** Where spans are made and go: the shared resource and scope, the id source, the processor. */
export interface SpanOutput {
  readonly origin: SpanOrigin;
  readonly ids: RandomIds;
  onEnd(span: ReadableSpan): void;
}

/** Results that are not a refusal or failure of the router's. */
const OK_RESULTS = new Set(['ok', 'policy_answered']);

/**
 * Makes the SERVER span of `record` and a CLIENT span per attempt (`now`: the record's end, a
 * `performance.now()` reading); sets `trace_id` / `span_id` on `record`.
 */
export function emitSpans(out: SpanOutput, record: AccessRecord, t: RecordTrace, now: number): void {
  // One wall-clock reading per record: every time of its spans is a performance.now() reading.
  const offset = Date.now() - now;
  const end = hrTimeOf(now, offset);
  const p = t.parent;
  const traceId = p === undefined ? out.ids.traceId() : p.traceId;
  const server: SpanContext = { traceId, spanId: out.ids.spanId(), traceFlags: 1 };
  // tracestate is carried as the caller sent it (the router adds no entry: it writes nothing).
  if (p !== undefined && t.tracestate !== undefined) server.traceState = createTraceState(t.tracestate);
  const parent: SpanContext | undefined =
    p === undefined ? undefined : { traceId, spanId: p.spanId, traceFlags: 1, isRemote: true };
  const http = record.method !== undefined;
  const span = new RecordSpan(
    out.origin,
    server,
    parent,
    http ? record.method! : `${record.protocol ?? 'tcp'} ${record.listener}`,
    SpanKind.SERVER,
    hrTimeOf(now - record.durationMs, offset),
    end,
    serverAttributes(record, t),
  );
  record.trace_id = traceId;
  record.span_id = server.spanId;
  const status = record.status ?? 0;
  const failed =
    status >= 500 || !OK_RESULTS.has(record.result) || (record.result === 'policy_answered' && status >= 400);
  if (failed) span.status = { code: SpanStatusCode.ERROR, message: record.reason ?? record.result };
  if (t.attempts !== undefined) {
    for (const a of t.attempts)
      out.onEnd(clientSpan(out, server, a, http ? record.method! : undefined, status, now, offset));
  }
  out.onEnd(span);
}

/** The CLIENT span of attempt `a`: from its dial (or its pick) to its first response byte, or to its failure. */
function clientSpan(
  out: SpanOutput,
  server: SpanContext,
  a: AttemptTrace,
  method: string | undefined,
  status: number,
  now: number,
  offset: number,
): RecordSpan {
  const ok = a.result === 'ok';
  const context: SpanContext = { traceId: server.traceId, spanId: out.ids.spanId(), traceFlags: 1 };
  // An attempt that connected ends at its first response byte, or with the record when none came.
  const endAt = ok ? (a.respondedAt ?? now) : a.at;
  const span = new RecordSpan(
    out.origin,
    context,
    server,
    ok && method !== undefined ? method : 'connect',
    SpanKind.CLIENT,
    hrTimeOf(a.at - a.dialMs, offset),
    hrTimeOf(endAt, offset),
    attemptAttributes(a),
  );
  if (ok) {
    // The dial and its TLS handshake are done (or a pooled connection was picked).
    span.events = [{ name: 'connected', time: hrTimeOf(a.at, offset), droppedAttributesCount: 0 }];
    if (status >= 500) span.status = { code: SpanStatusCode.ERROR };
  } else {
    span.status = { code: SpanStatusCode.ERROR, message: a.error ?? a.result };
  }
  return span;
}

function serverAttributes(r: AccessRecord, t: RecordTrace): Attributes {
  const a: Attributes = { 'switchboard.listener': r.listener, 'switchboard.result': r.result };
  if (t.clientIp !== '') a['client.address'] = t.clientIp;
  if (t.clientPort > 0) a['client.port'] = t.clientPort;
  if (r.method !== undefined) a['http.request.method'] = r.method;
  if (r.path !== undefined) a['url.path'] = r.path;
  if (r.host !== undefined && r.host !== '') a['server.address'] = r.host;
  if (r.status !== undefined) a['http.response.status_code'] = r.status;
  if (r.protocol !== undefined) a['network.protocol.name'] = r.protocol;
  if (t.sni !== undefined) a['tls.server.name'] = t.sni; // the ClientHello's SNI (passthrough and terminated)
  if (r.product !== undefined) a['switchboard.product'] = r.product;
  if (r.cluster !== undefined) a['switchboard.cluster'] = r.cluster;
  const last = t.attempts?.at(-1);
  if (last?.subcluster !== undefined) a['switchboard.subcluster'] = last.subcluster;
  if (r.backend !== undefined) a['switchboard.backend'] = r.backend;
  if (r.attempts !== undefined) a['switchboard.attempts'] = r.attempts;
  if (r.policy !== undefined) a['switchboard.policy'] = r.policy;
  if (r.action !== undefined) a['switchboard.policy.action'] = r.action;
  if (r.reason !== undefined) a['switchboard.reason'] = r.reason;
  a['network.io.client.bytes'] = r.bytesIn;
  a['network.io.server.bytes'] = r.bytesOut;
  return a;
}

function attemptAttributes(x: AttemptTrace): Attributes {
  const a: Attributes = {
    'server.address': x.backend.host,
    'server.port': x.backend.port,
    'network.peer.address': x.backend.host,
    'network.peer.port': x.backend.port,
    'switchboard.backend': x.backend.id,
    'switchboard.attempt': x.number,
    'switchboard.result': x.result,
  };
  if (x.subcluster !== undefined) a['switchboard.subcluster'] = x.subcluster;
  if (x.dialMs > 0) a['switchboard.dial_ms'] = Math.round(x.dialMs * 1000) / 1000;
  return a;
}
