/**
 * How a per-request connection (per-request.ts) ends, and its one connection-level result:
 *
 *   refuse / bodyError ─► answer: the router's response (Connection: close), then a linger
 *   close ─► end the client after what was written       (a response ended the connection, drain)
 *   abort ─► destroy the client now                        (client error, idle timeout, a cut response)
 *        all three: stop ─► state `closing`, links and pool destroyed, first non-ok result kept
 *   client 'close' ─► finish: the connection's access line (or its end, with per-request lines)
 *
 * 1. The router answers only when nothing is in flight, so an answer never interleaves with a
 *    forwarded response (a body error after part of a response went out cuts instead).
 * 2. The client's own listeners end the exchange in flight with client_error, idle_timeout or
 *    client_closed before the connection ends.
 */
import { RESULT_STATUS, type ResultCode } from '../../src/base/errors.ts';
import { endRecord, logConnection } from '../../src/data-path/access-record.ts';
import { discardUpTo, endWithLinger, errorResponse, LINGER_BYTES, statusOf } from '../../src/data-path/answer.ts';
import type { PanelRuntime } from '../../src/panel/contract.ts';
import { Exchange } from './exchange.ts';
import type { PerRequestDriver } from './per-request.ts';
import { stopIdle } from './per-request-idle.ts';
import { setLink } from './per-request-route.ts';

/** Graceful shutdown: between requests close now; otherwise after the current response. */
export function drain(d: PerRequestDriver): void {
  d.draining = true;
  if (d.begun && d.state === 'head' && d.exchange === undefined && d.pending === undefined) close(d, 'ok');
}

/**
 * A request the router answers itself: sent once nothing is in flight (always so here: a head
 * is routed only after the previous response, and a broken response is answered only while
 * none of it went out). `read`: the request's bytes the router read and did not forward (its
 * head, the body in hand; all of a head it could not parse), counted in the line's `bytesIn`
 * as forwarded bytes are, so a refused request logs what it cost like a proxied one.
 */
export function refuse(d: PerRequestDriver, code: ResultCode, reason?: string, read = 0): void {
  const ex = d.exchange ?? new Exchange(d.s.listener.name, d.s.connection.client, requestLog(d));
  d.exchange = undefined;
  ex.record.bytesIn += read;
  // The access line counts the answer the client gets (nothing of a response went out before it).
  if (!d.client.destroyed) ex.record.bytesOut += errorResponse(code)?.length ?? 0;
  ex.finish(code, statusOf(code), reason);
  answer(d, code, reason);
}

/** A request body the framing tracker cannot follow: 400 if nothing went out yet, else cut. */
export function bodyError(d: PerRequestDriver, reason: string): void {
  const ex = d.exchange!;
  const link = d.link;
  d.exchange = undefined;
  ex.finish('bad_request', 400, reason);
  setLink(d, undefined);
  link?.destroy();
  if ((link?.bytesOut ?? 0) === 0 && !ex.responseDone) answer(d, 'bad_request');
  else abort(d, 'bad_request');
}

/** Writes the router's answer for `code` (Connection: close) and closes after a linger. */
function answer(d: PerRequestDriver, code: ResultCode, reason?: string): void {
  stop(d, code);
  const c = d.client;
  const bytes = errorResponse(code, reason);
  if (bytes === undefined || c.destroyed) {
    c.destroy();
    return;
  }
  c.removeListener('data', d.onData);
  d.linger = endWithLinger(c, bytes);
}

/** Ends the client gracefully after what was written (its idle timeout still applies). */
export function close(d: PerRequestDriver, result: string): void {
  if (d.state === 'closing') return;
  stop(d, result);
  d.client.removeListener('data', d.onData);
  d.client.end();
  // What the client still sends is read and dropped, up to the linger's bound (src/data-path/answer.ts).
  discardUpTo(d.client, LINGER_BYTES);
}

/** Closes everything now. */
export function abort(d: PerRequestDriver, result: string): void {
  stop(d, result);
  d.client.destroy();
}

function stop(d: PerRequestDriver, result: string): void {
  d.state = 'closing';
  d.pending = undefined;
  d.replay = undefined;
  if (d.result === 'ok') d.result = result;
  const link = d.link;
  setLink(d, undefined);
  link?.destroy();
  d.pool.destroyAll();
}

/** The client's 'error' listener (a reset, or the pipeline's half-close or lifetime bound). */
export function onError(d: PerRequestDriver, err: Error): void {
  if (d.state === 'tunnel') return;
  const reason = `client: ${err.message}`;
  d.exchange?.finish('client_error', undefined, reason);
  d.exchange = undefined;
  if (d.result === 'ok') d.s.connection.reason = reason;
  abort(d, 'client_error');
}

/** No traffic within idleTimeout (per-request-idle.ts). */
export function onTimeout(d: PerRequestDriver): void {
  d.exchange?.finish('idle_timeout');
  d.exchange = undefined;
  abort(d, 'idle_timeout');
}

/** The client's 'close' listener: the end of the connection, unless a tunnel owns it. */
export function onClose(d: PerRequestDriver): void {
  if (d.state === 'tunnel') return;
  if (d.exchange !== undefined) {
    d.exchange.finish('client_closed');
    d.exchange = undefined;
    stop(d, 'client_closed');
  } else stop(d, 'ok');
  finish(d);
}

/**
 * A throw on this connection's path (a broken invariant, never bad input: that is refused with
 * a typed error): logged with its stack, the connection and its links closed, its end reported
 * once so its admission slot goes back. The other connections carry on.
 */
export function failed(d: PerRequestDriver, err: unknown): void {
  d.s.runtime.logger.error({ err }, 'per-request connection failed (internal error): closing it');
  d.exchange?.finish('internal_error');
  d.exchange = undefined;
  try {
    abort(d, 'internal_error');
  } finally {
    // 'close' already went by (the throw came from it, or from a tunnel's end): end it here.
    if (d.client.closed) finish(d);
  }
}

/** The connection's result, once: its access line (connection lines) or its end. */
export function finish(d: PerRequestDriver): void {
  if (d.finished) return;
  d.finished = true;
  d.s.runtime.drain.remove(d.drainNode);
  d.drainNode = undefined;
  stopIdle(d);
  if (d.linger !== undefined) clearTimeout(d.linger);
  const result = d.result;
  const s = d.s;
  const r = s.connection;
  endRecord(r, s.conn.acceptedAt, result, result in RESULT_STATUS ? statusOf(result as ResultCode) : undefined);
  r.bytesIn = s.client.bytesRead;
  r.bytesOut = s.client.bytesWritten;
  logConnection(r, s.requestLines ? undefined : s.runtime.accessLog);
  s.conn.done();
}

/** Where an exchange's per-request line goes: the runtime's access log, or nowhere (connection lines). */
export function requestLog(d: PerRequestDriver): PanelRuntime | undefined {
  return d.s.requestLines ? d.s.runtime : undefined;
}
