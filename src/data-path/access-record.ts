/**
 * Finishing an access record, the one way every panel does it:
 *
 *   describeRequest (once routed: client as routing saw it, host, path, method)
 *   endRecord       (result, status when > 0, reason, durationMs since the start)
 *   logConnection / logRequest ─► the access log (unless off) ─► switchboard:connection:end / request:end
 *
 * 1. A record is plain data (src/base/log.ts `AccessRecord`): the panel creates it, fills it as
 *    the connection or request goes, and ends it once with its result.
 * 2. The line goes to the access log when one is given and not `off` (a copy marked `line`
 *    when asked, as the net panel's per-request lines are); observers hear the record itself on
 *    the diagnostics channel only while someone subscribes.
 * 3. A TLS request (terminated or passed through) adds `secure`, `sni`, `alpn` and `tls_version`
 *    (`describeTls`); a plain one pays the read of `request.secure`.
 * 4. With `tracing:` (src/tracing/), `describeRequest` tells the tracer the record's request and
 *    the end tells it the record is done, before the line is written (`trace_id`, `span_id`);
 *    off, each is one property read.
 */
// Imported rather than the global: `globalThis.performance` is a lazy accessor (issue 18).
import { performance } from 'node:perf_hooks';
import { channels } from '../base/diagnostics.ts';
import type { AccessLog, AccessRecord } from '../base/log.ts';
import type { Request } from '../contracts/types.ts';
import { tracing } from '../tracing/tracer.ts';

/** An access log that may say it writes nothing (`access: off`), so no copy is made for it. */
export type MaybeOffAccessLog = AccessLog & { readonly off?: boolean };

/** Fills `record` with the request as routing saw it: its client (PROXY source or trusted forwarded address), host, path, method. */
export function describeRequest(record: AccessRecord, request: Request): void {
  record.client = `${request.clientIp}:${request.clientPort}`;
  record.host = request.host;
  if (request.path !== undefined) record.path = request.path;
  if (request.method !== undefined) record.method = request.method;
  if (request.secure) describeTls(record, request);
  const tracer = tracing.current;
  if (tracer !== undefined) tracer.begin(record, request);
}

/**
 * Fills `record` with the TLS facts of a TLS request: `secure`, the SNI, the ALPN (terminated:
 * the protocol agreed; passthrough: those offered, comma-separated) and, on a terminated
 * connection, the version agreed (a passthrough's is set by the panel from the ClientHello).
 */
export function describeTls(record: AccessRecord, request: Request): void {
  record.secure = true;
  if (request.sni !== undefined) record.sni = request.sni;
  const alpn = request.alpn;
  if (alpn.length > 0) record.alpn = alpn.length === 1 ? alpn[0]! : alpn.join(',');
  const version = request.tls?.version;
  if (version !== undefined) record.tls_version = version;
}

/** Milliseconds since `startedAt` (a `performance.now()` reading), to the microsecond. */
export function millisSince(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 1000) / 1000;
}

/** Ends `record` with `result`, `status` when > 0, `reason` when given, and its duration since `startedAt`. */
export function endRecord(
  record: AccessRecord,
  startedAt: number,
  result: string,
  status?: number,
  reason?: string,
): void {
  record.result = result;
  if (status !== undefined && status > 0) record.status = status;
  if (reason !== undefined) record.reason = reason;
  record.durationMs = millisSince(startedAt);
}

/** Writes a connection's line to `log` (undefined: none) and publishes `switchboard:connection:end`. */
export function logConnection(record: AccessRecord, log: MaybeOffAccessLog | undefined): void {
  const tracer = tracing.current;
  if (tracer !== undefined) tracer.end(record);
  if (log !== undefined && log.off !== true) log(record);
  if (channels.connectionEnd.hasSubscribers) channels.connectionEnd.publish({ record });
}

/**
 * Writes a request's line to `log` (undefined: none; with `line`, a copy of the record so marked)
 * and publishes `switchboard:request:end` with the record itself.
 */
export function logRequest(record: AccessRecord, log: MaybeOffAccessLog | undefined, line?: 'request'): void {
  const tracer = tracing.current;
  if (tracer !== undefined) tracer.end(record);
  if (log !== undefined && log.off !== true) log(line === undefined ? record : { ...record, line });
  if (channels.requestEnd.hasSubscribers) channels.requestEnd.publish({ record });
}
