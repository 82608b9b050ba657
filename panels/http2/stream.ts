/**
 * One stream through the `http2` panel: route it, open an exchange, forward both ways.
 *
 *   client stream ──► routeView ──► decideRoute ────► findJack + open (retry on ConnectError)
 *        ▲                                                     │
 *        └──── head, body, trailers ◄── exchange ◄─────────────┘ body, trailers ──►
 *
 * 1. Decisions use the engine's book and operator exactly as the splicing panels do, through the
 *    core's upstream pipeline (open-exchange.ts); retries happen only while nothing of the
 *    request has gone upstream (a failed connect).
 * 2. Bodies are piped with backpressure both ways, never buffered whole; trailers follow.
 * 3. A client reset cancels the upstream stream with the same code; an upstream reset resets
 *    the client stream with the upstream's code (HTTP/1 sides: the connection is destroyed).
 *    A lost upstream connection (no code to mirror) is answered 502 `upstream_reset` (gRPC:
 *    UNAVAILABLE) while no response head went out; after the head, a gRPC response ends with
 *    grpc-status UNAVAILABLE in trailers, anything else is reset.
 * 4. Router errors answer per DESIGN's table (errors.ts); every stream writes one access line.
 */

import type { Readable, Writable } from 'node:stream';
import type { ListenerConfig } from '../../src/config/schema.ts';
import { channels } from '../../src/diagnostics.ts';
import type { PanelRuntime } from '../../src/engine.ts';
import { isSwitchboardError, type ResultCode } from '../../src/errors.ts';
import type { AccessRecord } from '../../src/log.ts';
import { outlierStatusFor } from '../../src/outlier.ts';
import { decideRoute, isRouteRefused } from '../../src/route.ts';
import type { Opened, UpstreamFailure } from '../../src/upstream/index.ts';
import { clientAddress } from '../net/client-address.ts';
import { afterReads } from './after-reads.ts';
import { type Down, H1Down } from './down.ts';
import { abortResponse, endUpstreamLost, H2_INTERNAL_ERROR, isGrpc, recordAnswer, respondError } from './errors.ts';
import { type Exchange, H2_CANCEL, type UpstreamResponse } from './exchange.ts';
import { trailerFields } from './headers.ts';
import { openExchange, type UpstreamPools } from './open-exchange.ts';
import { type Routed, routeView } from './to-request.ts';

/** What a stream needs from its panel. */
export interface StreamContext extends UpstreamPools {
  readonly runtime: PanelRuntime;
  readonly listener: ListenerConfig;
}

const NO_FIELDS: Readonly<Record<string, string>> = Object.freeze(Object.create(null));

/** Routes and forwards one client stream; never throws on bad input. */
export function handleStream(down: Down, ctx: StreamContext): void {
  const { runtime } = ctx;
  const socket = down.socket;
  // A stream runs on the engine its connection was accepted with (the listener pipeline's).
  const engine = down.conn?.engine ?? runtime.engine;
  const started = performance.now();
  const record: AccessRecord = {
    listener: ctx.listener.name,
    // Set from the routing view below; a stream refused before it gets the socket's peer (log).
    client: '',
    protocol: down.h2 ? (ctx.listener.tls === 'terminate' ? 'h2' : 'h2c') : 'http1',
    bytesIn: 0,
    bytesOut: 0,
    durationMs: 0,
    result: 'ok',
  };
  let logged = false;
  const log = (result: string, status?: number, reason?: string) => {
    if (logged) return;
    logged = true;
    if (record.client === '') record.client = socket === undefined ? 'unknown' : clientAddress(socket);
    record.result = result;
    if (status !== undefined && status > 0) record.status = status;
    if (reason !== undefined) record.reason = reason;
    record.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    runtime.accessLog(record);
    if (channels.requestEnd.hasSubscribers) channels.requestEnd.publish({ record });
  };
  const grpc = isGrpc(down.contentType);
  const refuse = (code: ResultCode, reason?: string) => {
    down.body.resume(); // discard what the client still sends on this stream
    log(code, recordAnswer(record, code, grpc, respondError(down, code, grpc, reason), reason), reason);
  };

  // A throw on this stream's path is a broken invariant (bad input is refused above with a typed
  // error): logged with its stack, the stream reset, one access line; the connection and the
  // process carry on.
  try {
    let routed: Routed;
    try {
      routed = routeView(down, ctx.listener);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      const result = (e as { result?: ResultCode }).result ?? 'bad_request';
      refuse(result, e.message);
      return;
    }
    const { request } = routed;
    // The client as routing saw it: the PROXY source or a trusted forwarded address, when given.
    record.client = `${request.clientIp}:${request.clientPort}`;
    record.host = request.host;
    if (request.path !== undefined) record.path = request.path;
    if (request.method !== undefined) record.method = request.method;

    // The decision every panel makes (src/route.ts); CONNECT was refused by routeView already.
    const candidates = decideRoute(engine, ctx.listener, request, record);
    if (isRouteRefused(candidates)) {
      refuse(candidates.refused, candidates.reason);
      return;
    }

    // Pause until an exchange exists, so nothing of the body is read (or lost) before then.
    if (down.bodyLength !== 0 || !down.h2) down.body.pause();
    let clientGone = false;
    const onEarlyClose = () => {
      clientGone = true;
    };
    // One catch for the open and for what follows it: a throw in either (a broken invariant)
    // resets this stream and cancels what was opened for it; never an unhandled rejection.
    let exchange: Exchange | undefined;
    const opened = (result: Opened<Exchange> | UpstreamFailure) => {
      record.attempts = result.attempts;
      if ('result' in result) {
        if (clientGone) log('client_closed', undefined, result.reason);
        else refuse(result.result, result.reason);
        return;
      }
      record.backend = result.jack.backend.id;
      exchange = result.value;
      if (clientGone) {
        result.value.cancel(H2_CANCEL);
        log('client_closed', undefined, 'client went away while connecting');
        return;
      }
      // Cluster `outlierStatus`: the response status feeds passive health (src/outlier.ts).
      const outlier = outlierStatusFor(candidates.policy.outlierStatus);
      const { id } = result.jack.backend;
      const judge =
        outlier === undefined
          ? undefined
          : (status: number) => {
              if (outlier.matches(status)) runtime.registry.responseFailed(id, candidates.cluster);
              else runtime.registry.responseSucceeded(id, candidates.cluster);
            };
      forward(down, result.value, record, grpc, log, judge);
    };
    const failed = (err: unknown) => {
      // The client's head could not be sent (panels/http2/upstream-h2.ts): its answer, not a bug.
      const result = isSwitchboardError(err) ? (err as { result?: ResultCode }).result : undefined;
      if (result !== undefined && exchange === undefined && !down.headersSent) {
        refuse(result, (err as Error).message);
        return;
      }
      runtime.logger.error({ err }, 'http2 stream failed (internal error): resetting it');
      exchange?.cancel(H2_INTERNAL_ERROR);
      log('internal_error', abortBroken(down), String(err));
    };
    // A settled h2 session opens the stream at once (no promise); otherwise the attempts run.
    const pending = openExchange(routed, candidates, engine, ctx, down.bodyLength, down.conn?.socket);
    if (pending instanceof Promise) {
      down.onClose(onEarlyClose);
      pending
        .then((result) => {
          down.offClose(onEarlyClose);
          opened(result);
        })
        .catch(failed);
    } else {
      try {
        opened(pending);
      } catch (err) {
        failed(err);
      }
    }
  } catch (err) {
    runtime.logger.error({ err }, 'http2 stream failed (internal error): resetting it');
    log('internal_error', abortBroken(down), String(err));
  }
}

/**
 * Ends a stream that hit a bug; returns the status sent (0 for none). HTTP/2: RST_STREAM
 * INTERNAL_ERROR, the session's other streams untouched. HTTP/1.1: a 500 with `Connection:
 * close` while nothing of the response went out (node sends it after the responses pipelined
 * before it, so those are not cut), else the connection is closed.
 */
function abortBroken(down: Down): number {
  if (!(down instanceof H1Down)) {
    abortResponse(down, H2_INTERNAL_ERROR);
    return 0;
  }
  const { req, res } = down;
  if (res.headersSent) {
    abortResponse(down);
    req.socket?.destroy();
    return 0;
  }
  const body = 'internal_error\n';
  res.writeHead(500, {
    'content-type': 'text/plain',
    'content-length': String(body.length),
    'x-switchboard-error': 'internal_error',
    connection: 'close',
  });
  res.end(body);
  return 500;
}

/**
 * Copies `from` into `to` with backpressure, counting bytes (one listener, where `pipe()` adds
 * six per stream); the end of `from` is not forwarded (the exchange reports completion
 * separately, with trailers). Returns what stops the copy.
 */
function copy(from: Readable, to: Writable, count: (n: number) => void): () => void {
  const resume = () => from.resume();
  const onData = (c: Buffer) => {
    count(c.length);
    if (!to.write(c)) {
      from.pause();
      to.once('drain', resume);
    }
  };
  from.on('data', onData);
  return () => {
    from.removeListener('data', onData);
    to.removeListener('drain', resume);
  };
}

/** Pipes the request into the exchange and the response back, with resets both ways. */
function forward(
  down: Down,
  exchange: Exchange,
  record: AccessRecord,
  grpc: boolean,
  log: (result: string, status?: number, reason?: string) => void,
  judge: ((status: number) => void) | undefined,
): void {
  let done = false;
  let status = 0;
  const req = down.body;
  let stopRequest: (() => void) | undefined;
  if (down.h2 && down.bodyLength === 0) {
    // No body (END_STREAM on the client's HEADERS): the upstream request is complete already.
    exchange.finish(NO_FIELDS);
  } else {
    stopRequest = copy(req, exchange.body, (n) => {
      record.bytesIn += n;
    });
    req.on('end', () => exchange.finish(trailerFields(down.requestTrailers())));
    // An HTTP/2 stream has its error listener already (down.ts).
    if (!down.h2) req.on('error', () => {});
  }

  let ended = false;
  down.onClose(() => {
    if (done) return;
    done = true;
    // A reset (or a dropped HTTP/1 connection) closes the response before it completed.
    const code = down.closeCode();
    if (ended && down.flushed()) {
      log('ok', status);
      return;
    }
    // The client reset its stream (or dropped its connection) before the response was complete.
    exchange.cancel(code === 0 ? H2_CANCEL : code);
    log('client_reset', status || undefined, `client closed the stream (code ${code})`);
  });

  // The response head, sent with `trailers` (the response may end with trailer fields).
  const respond = (up: UpstreamResponse, endStream: boolean, trailers: boolean): boolean => {
    try {
      down.respond(up.status, up.headers, endStream, trailers);
      return true;
    } catch (e) {
      done = true;
      exchange.cancel(H2_INTERNAL_ERROR);
      abortResponse(down);
      log('upstream_reset', status, `response head not forwardable: ${(e as Error).message}`);
      return false;
    }
  };
  const copyResponse = (up: UpstreamResponse) =>
    copy(up.body, down.out, (n) => {
      record.bytesOut += n;
    });
  // An HTTP/2 head waits for the end of this turn's reads (after-reads.ts); what completed it
  // meanwhile waits here (`held`: the head is waiting; `heldEnd`: the trailers it ended with).
  // A response complete by then without trailers is opened without `waitForTrailers`: no
  // 'wantTrailers' callback, `sendTrailers` or node setImmediate per stream (its body and end
  // are written as usual: written together in one tick, node would close the stream before
  // the write's completion and build an ERR_STREAM_DESTROYED per stream).
  let held = false;
  let heldEnd: Record<string, string> | undefined;
  const sendHeld = (up: UpstreamResponse, complete: () => boolean) => {
    held = false;
    if (done) return;
    try {
      if (!respond(up, false, !complete())) return;
      copyResponse(up);
      if (heldEnd !== undefined) {
        ended = true;
        down.end(undefined, heldEnd);
      }
    } catch (err) {
      done = true;
      exchange.cancel(H2_INTERNAL_ERROR);
      log('internal_error', abortBroken(down), String(err));
    }
  };

  exchange.listen({
    response(up: UpstreamResponse) {
      if (done) return;
      status = up.status;
      judge?.(status);
      if (up.endStream && down.h2) {
        // Trailers-only: one HEADERS frame with END_STREAM, as the backend sent it (gRPC status).
        if (respond(up, true, false)) ended = true;
        return;
      }
      const complete = up.completeWithoutTrailers;
      if (down.h2 && complete !== undefined) {
        held = true;
        afterReads(() => sendHeld(up, complete));
        return;
      }
      if (respond(up, false, true)) copyResponse(up);
    },
    complete(trailers: Record<string, string>) {
      if (done || ended) return;
      if (held) {
        heldEnd = trailers;
        return;
      }
      ended = true;
      down.end(undefined, trailers);
    },
    failed(h2Code: number, reason: string) {
      if (done) return;
      done = true;
      stopRequest?.();
      req.resume();
      if (h2Code !== 0) {
        abortResponse(down, h2Code); // the backend reset the stream: mirror its code
        log('upstream_reset', status || undefined, reason);
        return;
      }
      // The upstream connection was lost: answer while nothing went out, never leave it hanging.
      const answered = recordAnswer(record, 'upstream_reset', grpc, endUpstreamLost(down, grpc));
      log('upstream_reset', answered || status || undefined, reason);
    },
  });
  req.resume();
}
