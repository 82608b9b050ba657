/**
 * What a traced record collected (its parent, its attempts) and the spans made from it at its
 * end, named and attributed by the OpenTelemetry semantic conventions (HTTP and network spans):
 *
 *   caller's span (inbound traceparent, or none: a new root)
 *     └─ SERVER  "GET" / "tls …"   listener, product, cluster, backend, policy, switchboard.result
 *          ├─ CLIENT "connect" attempt 1  backend 10.0.0.1:8080  (refused: status Error)
 *          └─ CLIENT "GET"     attempt 2  backend 10.0.0.2:8080  (connected event; ends with the record)
 *
 * Spans are made when the record ends, with the start times measured while it ran: nothing of
 * OpenTelemetry runs while the request is in flight.
 */
import {
  type Attributes,
  type Context,
  createTraceState,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { AccessRecord } from '../../src/base/log.ts';
import type { Backend } from '../../src/contracts/types.ts';
import type { ParentSpan } from '../../src/tracing/traceparent.ts';

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
}

/** A sampled record's trace: its parent (undefined: a new root) and its attempts. */
export interface RecordTrace {
  readonly parent: ParentSpan | undefined;
  readonly tracestate: string | undefined;
  readonly sni: string | undefined;
  attempts: AttemptTrace[] | undefined;
}

/** Results that are not a refusal or failure of the router's. */
const OK_RESULTS = new Set(['ok', 'policy_answered']);

/** Makes the SERVER span of `record` and a CLIENT span per attempt; sets `trace_id` / `span_id` on `record`. */
export function emitSpans(tracer: Tracer, record: AccessRecord, t: RecordTrace, now: number): void {
  const start = now - record.durationMs;
  const parent = parentContext(t);
  const http = record.method !== undefined;
  const server = tracer.startSpan(
    http ? record.method! : `${record.protocol ?? 'tcp'} ${record.listener}`,
    { kind: SpanKind.SERVER, startTime: start, attributes: serverAttributes(record, t) },
    parent,
  );
  const context = server.spanContext();
  record.trace_id = context.traceId;
  record.span_id = context.spanId;
  const status = record.status ?? 0;
  const failed =
    status >= 500 || !OK_RESULTS.has(record.result) || (record.result === 'policy_answered' && status >= 400);
  if (failed) server.setStatus({ code: SpanStatusCode.ERROR, message: record.reason ?? record.result });
  if (t.attempts !== undefined) {
    const inServer = trace.setSpan(ROOT_CONTEXT, server);
    for (const a of t.attempts) {
      const ok = a.result === 'ok';
      const client = tracer.startSpan(
        ok && http ? record.method! : 'connect',
        { kind: SpanKind.CLIENT, startTime: a.at - a.dialMs, attributes: attemptAttributes(a) },
        inServer,
      );
      if (ok) {
        client.addEvent('connected', a.at);
        if (status >= 500) client.setStatus({ code: SpanStatusCode.ERROR });
        client.end(now);
      } else {
        client.setStatus({ code: SpanStatusCode.ERROR, message: a.error ?? a.result });
        client.end(a.at);
      }
    }
  }
  server.end(now);
}

function parentContext(t: RecordTrace): Context {
  const p = t.parent;
  if (p === undefined) return ROOT_CONTEXT;
  const span = { traceId: p.traceId, spanId: p.spanId, traceFlags: p.sampled ? 1 : 0, isRemote: true };
  // tracestate is carried as the caller sent it (the router adds no entry: it writes nothing).
  return trace.setSpanContext(
    ROOT_CONTEXT,
    t.tracestate === undefined ? span : { ...span, traceState: createTraceState(t.tracestate) },
  );
}

function serverAttributes(r: AccessRecord, t: RecordTrace): Attributes {
  const a: Attributes = { 'switchboard.listener': r.listener, 'switchboard.result': r.result };
  const [clientAddress, clientPort] = splitHostPort(r.client);
  if (clientAddress !== '') a['client.address'] = clientAddress;
  if (clientPort !== undefined) a['client.port'] = clientPort;
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

/** `ip:port` (IPv6 bracketed or not) → [ip, port]; a text without a port → [text, undefined]. */
function splitHostPort(s: string): [string, number | undefined] {
  const i = s.lastIndexOf(':');
  if (i <= 0) return [s, undefined];
  const port = Number(s.slice(i + 1));
  if (!Number.isInteger(port)) return [s, undefined];
  const host = s.slice(0, i);
  return [host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host, port];
}
