/**
 * One client connection through the `net` panel (per-connection routing; with `routing:
 * per-request` an HTTP/1 connection is handed to per-request.ts once its first head is read):
 *
 *   listener pipeline (src/listener/: caps, PROXY header, TLS termination)
 *          → peek (TLS hello | h2c HEADERS | HTTP/1 head, within what is left of peekTimeout)
 *          → Request → decideRoute (src/route.ts: CONNECT check, findAddresses)
 *          → openUpstreamThen (findJack + connect, retries, PROXY out, TLS)
 *          → peeked bytes → splice
 *
 * h2c: the router's own empty SETTINGS answer the client's during the peek, and the splice cuts
 * the client's one ACK of them (src/h2c-settings-ack.ts), DESIGN's second byte exception. With
 * `h2c: route` the peek stops at the preface and the connection goes to the stream router
 * (the http2 engine the composition lent the panel): every stream is routed on its own there.
 *
 * Every exit writes one access-log line with a result code. Nothing is written to a backend
 * before the route is decided; errors are answered per DESIGN's table (HTTP/1 gets a response,
 * h2c a GOAWAY, TLS and PROXY failures a close).
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type Answerable, answer } from '../../src/answer.ts';
import { clientAddressing } from '../../src/client-ip.ts';
import { h2cModeOf } from '../../src/config/schema.ts';
import { channels } from '../../src/diagnostics.ts';
import type { PanelRuntime } from '../../src/engine.ts';
import { isSwitchboardError, type ResultCode } from '../../src/errors.ts';
import { SettingsAckFilter } from '../../src/h2c-settings-ack.ts';
import { clientText } from '../../src/listener/client-address.ts';
import type { Connection } from '../../src/listener/connection.ts';
import type { AccessRecord } from '../../src/log.ts';
import { H2_ERROR, SERVER_PREFACE } from '../../src/peek/h2c.ts';
import { type Peeked, peekThen } from '../../src/peek/peek.ts';
import { type RoutablePeek, requestFromPeek } from '../../src/peek/to-request.ts';
import { statusOf } from '../../src/respond.ts';
import { decideRoute, isRouteRefused } from '../../src/route.ts';
import { splice } from '../../src/splice.ts';
import type { Request } from '../../src/types.ts';
import { openUpstreamThen, type Upstream, type UpstreamFailure } from '../../src/upstream/index.ts';
import { perRequestStart, runPerRequest } from './per-request.ts';

const noop = () => {};

function describe(record: AccessRecord, request: Request): void {
  record.protocol = request.protocol;
  record.client = `${request.clientIp}:${request.clientPort}`;
  record.host = request.host;
  if (request.path !== undefined) record.path = request.path;
  if (request.method !== undefined) record.method = request.method;
}

/**
 * Handles one connection of the listener pipeline to completion (its socket is the decrypted
 * stream on a terminating listener); `c.done()` runs once when it has fully closed. `handOver`
 * takes an h2c connection of an `h2c: route` listener (absent: those listeners refuse h2c).
 */
export function handleConnection(
  c: Connection,
  runtime: PanelRuntime,
  handOver?: ((c: Connection) => void) | undefined,
): void {
  const { socket, listener, engine } = c;
  const started = c.acceptedAt;
  const record: AccessRecord = {
    listener: listener.name,
    // Filled by describe() once the Request is built, or at the end from the connection's peer.
    client: '',
    bytesIn: 0,
    bytesOut: 0,
    durationMs: 0,
    result: 'ok',
  };
  let ended = false;
  const log = (result: string, status?: number, reason?: string, write = true) => {
    ended = true;
    record.result = result;
    if (status !== undefined && status > 0) record.status = status;
    if (reason !== undefined) record.reason = reason;
    record.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    record.bytesIn = socket.bytesRead;
    record.bytesOut = socket.bytesWritten;
    if (record.client === '') record.client = clientText(c.ip, c.port);
    if (write) runtime.accessLog(record);
    if (channels.connectionEnd.hasSubscribers) channels.connectionEnd.publish({ record });
    c.done();
  };
  /** Answers `code` and logs once the client socket has closed. */
  const refuse = (code: ResultCode, protocol: Answerable, reason?: string, h2Code?: number) => {
    const status = protocol === 'http1' ? statusOf(code) : undefined;
    if (socket.destroyed) log(code, status, reason);
    else socket.once('close', () => log(code, status, reason));
    answer(socket, code, protocol, h2Code, reason);
  };
  // The pipeline put one on the raw socket already; a TLS socket needs its own.
  if (socket !== c.raw) socket.on('error', noop);

  // A throw below is a bug (bad input is answered above with a typed error): logged with its
  // stack, the client and the upstream socket opened for it closed, one access line, the slot
  // back. The panel's own catch stays as the last resort. From accept to the first write the
  // path is callbacks (peekThen, openUpstreamThen): no promise, no async frame.
  let upstream: Socket | undefined;
  const internal = (err: unknown) => {
    runtime.logger.error({ err }, 'connection failed (internal error): closing it');
    upstream?.destroy();
    socket.destroy();
    c.raw.destroy();
    if (!ended) log('internal_error', undefined, String(err));
  };

  const connected = (err: unknown, up: Upstream | UpstreamFailure | undefined, peeked: RoutablePeek) => {
    if (err !== undefined) throw err;
    if (up === undefined) throw new Error('openUpstream settled without an outcome');
    record.attempts = up.attempts;
    if ('result' in up) {
      refuse(up.result, peeked.kind, up.reason);
      return;
    }
    upstream = up.socket;
    record.backend = up.jack.backend.id;
    if (socket.destroyed) {
      upstream.destroy();
      log('client_closed', undefined, 'client went away while connecting');
      return;
    }
    const filter = peeked.kind === 'h2c' ? new SettingsAckFilter() : undefined;
    splice(
      socket,
      upstream,
      peeked.buffer,
      engine.limits.idleTimeout,
      (end, reason) => log(end, undefined, reason),
      filter,
    );
  };

  const route = (peeked: Peeked) => {
    if (peeked.kind === 'h2c-preface') {
      // `h2c: route`: the bytes go back and the http2 engine takes the connection (and its
      // `c.done()`); it routes every stream and writes a line for each.
      socket.unshift(peeked.buffer);
      ended = true;
      handOver!(c);
      return;
    }
    let request: Request;
    try {
      request = requestFromPeek(peeked, {
        listener: listener.name,
        socket,
        peer: c,
        addressing: clientAddressing(listener),
        paths: listener.pathNormalization,
      });
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      refuse('bad_request', peeked.kind, e.message, H2_ERROR.PROTOCOL_ERROR);
      return;
    }
    describe(record, request);

    if (peeked.kind === 'http1' && engine.loaded.config.routing === 'per-request') {
      // Every request of the connection is routed on its own from here on (per-request.ts); the
      // start is built outside this handler, so the driver keeps none of its closures.
      runPerRequest(perRequestStart(c, runtime, record, peeked.proxy), peeked.head, peeked.buffer, request);
      return;
    }

    // CONNECT check, findAddresses, no_route (src/route.ts): the same decision as per-request.
    const candidates = decideRoute(engine, listener, request, record, socket);
    if (isRouteRefused(candidates)) {
      refuse(candidates.refused, peeked.kind, candidates.reason);
      return;
    }

    // The upstream pipeline (src/upstream/): retries, TLS, the outbound PROXY header, accounting.
    openUpstreamThen(request, candidates, engine.operator, runtime, engine, 'splice', (err, up) => {
      try {
        connected(err, up, peeked);
      } catch (e) {
        internal(e);
      }
    });
  };

  const h2cMode = h2cModeOf(listener, engine.loaded.config);
  try {
    // The PROXY header, if any, was read by the pipeline: one deadline for both from accept.
    peekThen(
      socket,
      {
        peekTimeout: c.remaining(),
        maxHeaderBytes: engine.limits.maxHeaderBytes,
        maxHeaderCount: engine.limits.maxHeaderCount,
        tls: listener.tls,
        h2c: h2cMode === 'route' && handOver === undefined ? 'refuse' : h2cMode,
        proxy: c.proxy,
        paths: listener.pathNormalization,
        // h2c: our own empty SETTINGS once the client's are in, so clients that wait for the
        // server's SETTINGS (grpc-js) send their first HEADERS; the splice cuts their ACK of it.
        onH2cSettings: () => socket.write(SERVER_PREFACE),
      },
      (failure, peeked) => {
        try {
          if (failure === undefined) route(peeked!);
          else if (failure.result === 'client_closed') {
            socket.destroy();
            log('client_closed', undefined, failure.message);
          } else refuse(failure.result, failure.protocol, failure.message, failure.h2Code);
        } catch (e) {
          internal(e);
        }
      },
    );
  } catch (e) {
    internal(e);
  }
}
