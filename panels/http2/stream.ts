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

import type { ListenerConfig } from '../../src/config/schema.ts';
import { channels } from '../../src/diagnostics.ts';
import type { PanelRuntime } from '../../src/engine.ts';
import { isSwitchboardError, type ResultCode } from '../../src/errors.ts';
import { connectionOf } from '../../src/listener/pipeline.ts';
import type { AccessRecord } from '../../src/log.ts';
import { outlierStatusFor } from '../../src/outlier.ts';
import { decideRoute, isRouteRefused } from '../../src/route.ts';
import { clientAddress } from '../net/client-address.ts';
import {
  abortResponse,
  type DownResponse,
  endUpstreamLost,
  H2_INTERNAL_ERROR,
  isGrpc,
  recordAnswer,
  respondError,
  writeHead,
} from './errors.ts';
import { type Exchange, H2_CANCEL, type UpstreamResponse } from './exchange.ts';
import { trailerFields } from './headers.ts';
import { openExchange, type UpstreamPools } from './open-exchange.ts';
import { type DownRequest, type Routed, routeView } from './to-request.ts';

/** What a stream needs from its panel. */
export interface StreamContext extends UpstreamPools {
  readonly runtime: PanelRuntime;
  readonly listener: ListenerConfig;
}

/** The client's body length: a number, 0 for none, undefined for unknown (streamed). */
function bodyLength(req: DownRequest): number | undefined {
  if (req.httpVersionMajor === 2 && 'stream' in req && req.stream.endAfterHeaders) return 0;
  const cl = req.headers['content-length'];
  if (cl !== undefined && /^\d+$/.test(cl)) return Number(cl);
  if (req.httpVersionMajor === 2) return undefined;
  return req.headers['transfer-encoding'] === undefined ? 0 : undefined;
}

/** Routes and forwards one client stream; never throws on bad input. */
export function handleStream(req: DownRequest, res: DownResponse, ctx: StreamContext): void {
  const { runtime } = ctx;
  const socket = req.socket;
  // A stream runs on the engine its connection was accepted with (the listener pipeline's).
  const engine = (socket === undefined ? undefined : connectionOf(socket)?.engine) ?? runtime.engine;
  const started = performance.now();
  const record: AccessRecord = {
    listener: ctx.listener.name,
    client: socket === undefined ? 'unknown' : clientAddress(socket),
    protocol: req.httpVersionMajor === 2 ? (ctx.listener.tls === 'terminate' ? 'h2' : 'h2c') : 'http1',
    bytesIn: 0,
    bytesOut: 0,
    durationMs: 0,
    result: 'ok',
  };
  let logged = false;
  const log = (result: string, status?: number, reason?: string) => {
    if (logged) return;
    logged = true;
    record.result = result;
    if (status !== undefined && status > 0) record.status = status;
    if (reason !== undefined) record.reason = reason;
    record.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    runtime.accessLog(record);
    if (channels.requestEnd.hasSubscribers) channels.requestEnd.publish({ record });
  };
  const grpc = isGrpc(req.headers['content-type']);
  const refuse = (code: ResultCode, reason?: string) => {
    req.resume(); // discard what the client still sends on this stream
    log(code, recordAnswer(record, code, grpc, respondError(res, code, grpc, reason), reason), reason);
  };

  // A throw on this stream's path is a broken invariant (bad input is refused above with a typed
  // error): logged with its stack, the stream reset, one access line; the connection and the
  // process carry on.
  try {
    let routed: Routed;
    try {
      routed = routeView(req, ctx.listener);
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
    req.pause();
    let clientGone = false;
    const onEarlyClose = () => {
      clientGone = true;
    };
    res.once('close', onEarlyClose);
    // One catch for the open and for what follows it: a throw in either (a broken invariant)
    // resets this stream and cancels what was opened for it; never an unhandled rejection.
    let exchange: Exchange | undefined;
    const client = socket === undefined ? undefined : connectionOf(socket)?.socket;
    openExchange(routed, candidates, engine, ctx, bodyLength(req), client)
      .then((opened) => {
        res.removeListener('close', onEarlyClose);
        record.attempts = opened.attempts;
        if ('result' in opened) {
          if (clientGone) log('client_closed', undefined, opened.reason);
          else refuse(opened.result, opened.reason);
          return;
        }
        record.backend = opened.jack.backend.id;
        exchange = opened.value;
        if (clientGone) {
          opened.value.cancel(H2_CANCEL);
          log('client_closed', undefined, 'client went away while connecting');
          return;
        }
        // Cluster `outlierStatus`: the response status feeds passive health (src/outlier.ts).
        const outlier = outlierStatusFor(candidates.policy.outlierStatus);
        const { id } = opened.jack.backend;
        const judge =
          outlier === undefined
            ? undefined
            : (status: number) => {
                if (outlier.matches(status)) runtime.registry.responseFailed(id, candidates.cluster);
                else runtime.registry.responseSucceeded(id, candidates.cluster);
              };
        forward(req, res, opened.value, record, grpc, log, judge);
      })
      .catch((err: unknown) => {
        // The client's head could not be sent (panels/http2/upstream-h2.ts): its answer, not a bug.
        const result = isSwitchboardError(err) ? (err as { result?: ResultCode }).result : undefined;
        if (result !== undefined && exchange === undefined && !res.headersSent) {
          refuse(result, (err as Error).message);
          return;
        }
        runtime.logger.error({ err }, 'http2 stream failed (internal error): resetting it');
        exchange?.cancel(H2_INTERNAL_ERROR);
        log('internal_error', abortBroken(req, res), String(err));
      });
  } catch (err) {
    runtime.logger.error({ err }, 'http2 stream failed (internal error): resetting it');
    log('internal_error', abortBroken(req, res), String(err));
  }
}

/**
 * Ends a stream that hit a bug; returns the status sent (0 for none). HTTP/2: RST_STREAM
 * INTERNAL_ERROR, the session's other streams untouched. HTTP/1.1: a 500 with `Connection:
 * close` while nothing of the response went out (node sends it after the responses pipelined
 * before it, so those are not cut), else the connection is closed.
 */
function abortBroken(req: DownRequest, res: DownResponse): number {
  if ('stream' in res) {
    abortResponse(res, H2_INTERNAL_ERROR);
    return 0;
  }
  if (res.headersSent) {
    abortResponse(res);
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

/** Pipes the request into the exchange and the response back, with resets both ways. */
function forward(
  req: DownRequest,
  res: DownResponse,
  exchange: Exchange,
  record: AccessRecord,
  grpc: boolean,
  log: (result: string, status?: number, reason?: string) => void,
  judge: ((status: number) => void) | undefined,
): void {
  let done = false;
  let status = 0;
  req.on('data', (c: Buffer) => {
    record.bytesIn += c.length;
  });
  req.pipe(exchange.body, { end: false });
  req.once('end', () => exchange.finish(trailerFields(req.rawTrailers)));
  req.on('error', () => {});

  let ended = false;
  res.once('close', () => {
    if (done) return;
    done = true;
    // HTTP/2 compat responses emit 'finish' even on a reset, so success is judged here.
    const code = 'stream' in res ? (res.stream.rstCode ?? 0) : 0;
    const flushed = 'stream' in res ? code === 0 : res.writableFinished;
    if (ended && flushed) {
      log('ok', status);
      return;
    }
    // The client reset its stream (or dropped its connection) before the response was complete.
    exchange.cancel(code === 0 ? H2_CANCEL : code);
    log('client_reset', status || undefined, `client closed the stream (code ${code})`);
  });

  exchange.listen({
    response(up: UpstreamResponse) {
      if (done) return;
      status = up.status;
      judge?.(status);
      try {
        if (up.endStream && 'stream' in res) {
          // Trailers-only: one HEADERS frame with END_STREAM, as the backend sent it (gRPC status).
          res.stream.respond({ ...up.headers, ':status': up.status }, { endStream: true });
          ended = true;
          return;
        }
        writeHead(res, up.status, up.headers);
      } catch (e) {
        done = true;
        exchange.cancel(H2_INTERNAL_ERROR);
        abortResponse(res);
        log('upstream_reset', status, `response head not forwardable: ${(e as Error).message}`);
        return;
      }
      up.body.on('data', (c: Buffer) => {
        record.bytesOut += c.length;
      });
      up.body.pipe(res, { end: false });
    },
    complete(trailers: Record<string, string>) {
      if (done || ended) return;
      if (Object.keys(trailers).length > 0) res.addTrailers(trailers);
      ended = true;
      res.end();
    },
    failed(h2Code: number, reason: string) {
      if (done) return;
      done = true;
      req.unpipe(exchange.body);
      req.resume();
      if (h2Code !== 0) {
        abortResponse(res, h2Code); // the backend reset the stream: mirror its code
        log('upstream_reset', status || undefined, reason);
        return;
      }
      // The upstream connection was lost: answer while nothing went out, never leave it hanging.
      const answered = recordAnswer(record, 'upstream_reset', grpc, endUpstreamLost(res, grpc));
      log('upstream_reset', answered || status || undefined, reason);
    },
  });
  req.resume();
}
