/**
 * One client connection through the `net` panel (per-connection routing; with `routing:
 * per-request` an HTTP/1 connection is handed to per-request.ts once its first head is read):
 *
 *   listener pipeline (src/listener/: caps, PROXY header, TLS termination)
 *          → peek (TLS hello | h2c HEADERS | HTTP/1 head, within what is left of peekTimeout)
 *          → Request → TLS passthrough: the `handshake` policies on the ClientHello
 *          → decideRoute (src/routing/route.ts: CONNECT check, request/routed policies, findAddresses)
 *          → openUpstreamThen (findJack + connect, retries, PROXY out, TLS)
 *          → peeked bytes → splice
 *
 * h2c: the router's own empty SETTINGS answer the client's during the peek, and the splice cuts
 * the client's one ACK of them (src/data-path/h2c-settings-ack.ts), DESIGN's second byte exception. The
 * router also ACKs each client SETTINGS and answers each PING before the first HEADERS, and the
 * splice cuts the backend's own ACKs of those (src/data-path/h2c-backend-acks.ts). With
 * `h2c: route` the peek stops at the preface and the connection goes to the stream router
 * (the http2 engine the composition lent the panel): every stream is routed on its own there.
 *
 * Every exit writes one access-log line with a result code. Nothing is written to a backend
 * before the route is decided; errors are answered per DESIGN's table (HTTP/1 gets a response,
 * h2c a GOAWAY, TLS and PROXY failures a close).
 */
import type { Socket } from 'node:net';
import { InternalError, isSwitchboardError, type ResultCode } from '../../src/base/errors.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import { h2cModeOf } from '../../src/config/schema.ts';
import type { Request } from '../../src/contracts/types.ts';
import { describeRequest, endRecord, logConnection } from '../../src/data-path/access-record.ts';
import { type Answerable, answer, endWithLinger, statusOf } from '../../src/data-path/answer.ts';
import { BackendAckFilter } from '../../src/data-path/h2c-backend-acks.ts';
import { SettingsAckFilter } from '../../src/data-path/h2c-settings-ack.ts';
import { h2cPolicyAnswer, http1PolicyAnswer } from '../../src/data-path/policy-answer.ts';
import { splice } from '../../src/data-path/splice.ts';
import { clientText } from '../../src/listener/client-address.ts';
import type { Connection } from '../../src/listener/connection.ts';
import type { PanelRuntime } from '../../src/panel/contract.ts';
import { FLAG, FRAME, FRAME_HEADER_BYTES } from '../../src/peek/h2-frames.ts';
import { H2_ERROR, SERVER_PREFACE } from '../../src/peek/h2c.ts';
import { isH2cUpgrade } from '../../src/peek/h2c-upgrade.ts';
import { type Peeked, peekThen } from '../../src/peek/peek.ts';
import { offeredTlsVersion } from '../../src/peek/tls-version.ts';
import { joinHolds, type PolicyOutcome } from '../../src/policy/outcome.ts';
import { clientAddressing } from '../../src/request/client-ip.ts';
import { type RoutablePeek, requestFromPeek } from '../../src/request/from-peek.ts';
import { decideRoute, isPolicyFired, isRouteRefused } from '../../src/routing/route.ts';
import { isUpstreamFailure, openUpstreamThen, type Upstream, type UpstreamFailure } from '../../src/upstream/index.ts';
import { upgradeToH2c } from './h2c-upgrade.ts';
import { perRequestStart, runPerRequest } from './per-request.ts';

const noop = () => {};

/** The router's SETTINGS ACK (RFC 9113 §6.5.3). */
const SETTINGS_ACK = Buffer.from([0, 0, 0, FRAME.SETTINGS, FLAG.ACK, 0, 0, 0, 0]);
/** Its own empty SETTINGS, then the ACK of the client's first SETTINGS. */
const PREFACE_AND_ACK = Buffer.concat([SERVER_PREFACE, SETTINGS_ACK]);

/** A PING ACK with the client's 8-byte payload (RFC 9113 §6.7). */
function pingAck(payload: Buffer): Buffer {
  const out = Buffer.alloc(FRAME_HEADER_BYTES + 8);
  out[2] = 8;
  out[3] = FRAME.PING;
  out[4] = FLAG.ACK;
  payload.copy(out, FRAME_HEADER_BYTES);
  return out;
}

/** What the router answered of an h2c client's frames before its first HEADERS. */
interface Answered {
  settings: number;
  readonly pings: Buffer[];
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
    // Filled by describeRequest() once the Request is built, or at the end from the connection's peer.
    client: '',
    bytesIn: 0,
    bytesOut: 0,
    durationMs: 0,
    result: 'ok',
  };
  let ended = false;
  const log = (result: string, status?: number, reason?: string, write = true) => {
    ended = true;
    endRecord(record, started, result, status, reason);
    record.bytesIn = socket.bytesRead;
    record.bytesOut = socket.bytesWritten;
    if (record.client === '') record.client = clientText(c.ip, c.port);
    logConnection(record, write ? runtime.accessLog : undefined);
    c.done();
  };
  /** Answers `code` and logs once the client socket has closed. */
  const refuse = (code: ResultCode, protocol: Answerable, reason?: string, h2Code?: number) => {
    const status = protocol === 'http1' ? statusOf(code) : undefined;
    if (socket.destroyed) log(code, status, reason);
    else socket.once('close', () => log(code, status, reason));
    answer(socket, code, protocol, h2Code, reason);
  };
  /**
   * A `policies:` rule fired on the connection's first request (per-connection routing routes
   * the connection once, so the connection ends with the answer): a close closes, an answer
   * goes in the client's protocol with `Connection: close` (h2c: the stream's response, then a
   * GOAWAY; an h2c body over the initial window, or TLS, is closed instead).
   */
  const policyFired = (outcome: PolicyOutcome, peeked: RoutablePeek) => {
    const verdict = outcome.verdict;
    const reason = `policy ${outcome.rule ?? ''} (${outcome.policy ?? ''})`;
    let bytes: Buffer | undefined;
    if (verdict.action === 'answer') {
      if (peeked.kind === 'http1') bytes = http1PolicyAnswer(verdict.answer, false, peeked.head.method === 'HEAD');
      else if (peeked.kind === 'h2c')
        bytes = h2cPolicyAnswer(verdict.answer, peeked.head.streamId, peeked.head.method === 'HEAD');
    }
    if (bytes === undefined || socket.destroyed) {
      if (verdict.action === 'answer') record.action = 'close';
      delete record.status;
      socket.destroy();
      log('policy_closed', undefined, reason);
      return;
    }
    socket.once('close', () => log('policy_answered', verdict.action === 'answer' ? verdict.answer.status : 0, reason));
    endWithLinger(socket, bytes);
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
    if (up === undefined) throw new InternalError('openUpstream settled without an outcome');
    record.attempts = up.attempts;
    if (isUpstreamFailure(up)) {
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
    // h2c: the backend's ACKs of what the router answered during the peek are cut on the way back.
    const back =
      peeked.kind === 'h2c' && answered !== undefined
        ? new BackendAckFilter(answered.settings, answered.pings)
        : undefined;
    splice(
      socket,
      upstream,
      peeked.buffer,
      engine.limits.idleTimeout,
      (end, reason) => log(end, undefined, reason),
      filter,
      back,
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
    // `Upgrade: h2c`, which only an `h2c: route` peek lets through: the router answers 101
    // and the stream router takes the connection, the request as stream 1 (h2c-upgrade.ts).
    if (peeked.kind === 'http1' && peeked.head.upgrade && isH2cUpgrade(peeked.head)) {
      upgradeToH2c(
        c,
        peeked.head,
        peeked.buffer.subarray(peeked.head.headLength),
        handOver!,
        (result, reason, h2Code) => {
          record.protocol = 'h2c';
          record.method = peeked.head.method;
          if (peeked.head.path !== undefined) record.path = peeked.head.path;
          if (result !== 'client_closed') refuse(result, 'h2c', reason, h2Code);
          else {
            socket.destroy();
            log(result, undefined, reason);
          }
        },
      );
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
    record.protocol = request.protocol;
    describeRequest(record, request);
    // Passed through: the router never sees the ServerHello, so the line says the highest version offered.
    if (peeked.kind === 'tls') {
      const offered = offeredTlsVersion(peeked.hello);
      if (offered !== undefined) record.tls_version = offered;
    }

    if (peeked.kind === 'http1' && engine.loaded.config.routing === 'per-request') {
      // Every request of the connection is routed on its own from here on (per-request.ts); the
      // start is built outside this handler, so the driver keeps none of its closures.
      runPerRequest(perRequestStart(c, runtime, record, peeked.proxy), peeked.head, peeked.buffer, request);
      return;
    }

    // TLS passthrough: the ClientHello is the `handshake` point (SNI, ALPN); request points never run.
    if (peeked.kind === 'tls' && engine.policies.has('handshake')) {
      const outcome = engine.policies.handshake({ connection: request });
      if (outcome.verdict.action !== 'pass') {
        record.policy = outcome.rule ?? '';
        record.action = 'close';
        policyFired(outcome, peeked);
        return;
      }
      c.policyHold = joinHolds(c.policyHold, outcome);
    }

    // CONNECT check, the request and routed policies, findAddresses, no_route
    // (src/routing/route.ts): the same decision as per-request.
    const candidates = decideRoute(engine, listener, request, record, socket, c);
    if (isRouteRefused(candidates)) {
      if (isPolicyFired(candidates)) policyFired(candidates.fired, peeked);
      else refuse(candidates.refused, peeked.kind, candidates.reason);
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
  // h2c (`allow`): the router's own SETTINGS with the ACK of the client's first, then an ACK for
  // each later SETTINGS and PING before the first HEADERS, before any backend is chosen
  // (clients such as grpc-js and h2spec wait for them); the splice cuts the backend's own.
  // Only an `allow` listener peeks h2c frames: the others make no closure for it, and what was
  // answered is allocated at the first frame.
  let answered: Answered | undefined;
  const onH2cControl =
    h2cMode !== 'allow'
      ? undefined
      : (type: 'settings' | 'ping', payload: Buffer) => {
          answered ??= { settings: 0, pings: [] };
          if (type === 'settings') {
            socket.write(answered.settings === 0 ? PREFACE_AND_ACK : SETTINGS_ACK);
            answered.settings++;
          } else {
            answered.pings.push(Buffer.from(payload));
            socket.write(pingAck(payload));
          }
        };
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
        onH2cControl,
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
