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
 *
 * A stream's state is one object (`Stream`) whose methods are what were closures per stream
 * (the access line, refusals, the open's outcome); forwarding is stream-forward.ts.
 */

import type { Http2Session } from 'node:http2';
import { performance } from 'node:perf_hooks';
import { isPeerError, isSwitchboardError, type ResultCode } from '../../src/base/errors.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import type { ListenerConfig } from '../../src/config/schema.ts';
import type { Hold } from '../../src/contracts/policy.ts';
import type { Candidates, Request } from '../../src/contracts/types.ts';
import { describeRequest, endRecord, logRequest } from '../../src/data-path/access-record.ts';
import { connectionPoint, handshakePoint } from '../../src/listener/connection-point.ts';
import { clientOf } from '../../src/listener/pipeline.ts';
import type { PanelRuntime } from '../../src/panel/contract.ts';
import { finishContext } from '../../src/policy/finish-context.ts';
import type { PolicyOutcome } from '../../src/policy/outcome.ts';
import { decideRoute, isPolicyFired, isRouteRefused } from '../../src/routing/route.ts';
import { isUpstreamFailure, type Opened, responseJudgeFor, type UpstreamFailure } from '../../src/upstream/index.ts';
import { type AfterReads, afterReads } from './after-reads.ts';
import type { Down, H2Down } from './down.ts';
import { abortBroken, H2_INTERNAL_ERROR, isGrpc, recordAnswer, respondError } from './errors.ts';
import { type Exchange, H2_CANCEL } from './exchange.ts';
import { openExchange, type UpstreamPools } from './open-exchange.ts';
import { resetBudgetOf } from './resets.ts';
import { Forwarding, type StreamLog } from './stream-forward.ts';
import { type Routed, routeView } from './stream-request.ts';
import type { ClientWatch } from './upstream-h2.ts';

/** What a stream needs from its panel. */
export interface StreamContext extends UpstreamPools {
  readonly runtime: PanelRuntime;
  readonly listener: ListenerConfig;
}

/**
 * Routes and forwards one client stream; never throws on bad input. An HTTP/2 stream is routed
 * once the reads of its turn were handled, so one its client reset in the same reads (rapid
 * reset, resets.ts) is never routed, nor opened upstream.
 */
export function handleStream(down: Down, ctx: StreamContext): void {
  if (down.h2) afterReads(new Stream(down, ctx));
  else new Stream(down, ctx).run();
}

/** Results that mean the client ended its stream before the response was complete. */
const CLIENT_ENDED = new Set(['client_reset', 'client_closed']);

/** One client stream: its access record, its routing and the outcome of its exchange's open. */
class Stream implements StreamLog, AfterReads, ClientWatch {
  readonly record: AccessRecord;
  readonly #down: Down;
  readonly #ctx: StreamContext;
  readonly #started = performance.now();
  readonly #grpc: boolean;
  #logged = false;
  /** The slots of the rules that let this stream through (in-flight), given back with its line. */
  policyHold: Hold | undefined = undefined;
  /** The stream's request once its view is built (for the policies that observe ends). */
  #request: Request | undefined = undefined;
  #exchange: Exchange | undefined = undefined;
  #clientGone = false;
  /** The client's HTTP/2 session (a destroyed stream no longer names it). */
  readonly #session: Http2Session | undefined;

  constructor(down: Down, ctx: StreamContext) {
    this.#down = down;
    this.#ctx = ctx;
    this.#session = down.h2 ? (down as H2Down).stream.session : undefined;
    this.record = {
      listener: ctx.listener.name,
      // Set from the routing view below; a stream refused before it gets the socket's peer (log).
      client: '',
      protocol: down.h2 ? (ctx.listener.tls === 'terminate' ? 'h2' : 'h2c') : 'http1',
      bytesIn: 0,
      bytesOut: 0,
      durationMs: 0,
      result: 'ok',
    };
    this.#grpc = isGrpc(down.contentType);
  }

  /** The stream's one access line (later calls do nothing). */
  log(result: string, status?: number, reason?: string): void {
    if (this.#logged) return;
    this.#logged = true;
    this.policyHold?.release();
    const record = this.record;
    if (record.client === '') {
      const socket = this.#down.socket;
      record.client = socket === undefined ? 'unknown' : clientOf(socket);
    }
    endRecord(record, this.#started, result, status, reason);
    logRequest(record, this.#ctx.runtime.accessLog);
    if (CLIENT_ENDED.has(result)) this.#countReset();
    this.#finished();
  }

  /**
   * The policies that observe ends are told (ended `stream`), only when one does, on the engine
   * the stream ran on: the request's facts, else the connection's (a stream refused before its
   * request was built); a stream with neither (its session already gone) is not told.
   */
  #finished(): void {
    const down = this.#down;
    const conn = down.conn;
    const policies = (conn?.engine ?? this.#ctx.runtime.engine).policies;
    if (!policies.observes) return;
    const request = this.#request;
    const record = this.record;
    if (request !== undefined) {
      policies.finish(finishContext('stream', request, request, record.product, record.cluster));
    } else if (conn !== undefined) {
      const point = conn.socket === conn.raw ? connectionPoint(conn) : handshakePoint(conn);
      policies.finish(finishContext('stream', point.connection));
    }
  }

  /** A client's RST_STREAM before any response counts against its reset budget (resets.ts). */
  #countReset(): void {
    const down = this.#down;
    if (!down.h2 || down.headersSent || down.closeCode() === 0) return;
    const session = this.#session;
    const socket = down.socket;
    if (session === undefined || socket === undefined) return;
    const client = clientOf(socket);
    const address = client.slice(0, client.lastIndexOf(':'));
    if (resetBudgetOf(this.#ctx.runtime).note(session, address)) {
      this.#ctx.runtime.logger.warn(
        { client, listener: this.record.listener },
        'http2: client reset too many streams before their response: connection closed (GOAWAY ENHANCE_YOUR_CALM)',
      );
    }
  }

  /** Whether the client stream is gone (reset or closed): nothing must be opened upstream for it. */
  clientGone(): boolean {
    const down = this.#down;
    return this.#clientGone || (down.h2 && (down as H2Down).stream.destroyed);
  }

  /** An HTTP/2 stream's turn came (handleStream): routed unless its client reset it already. */
  afterReads(): void {
    if (!this.clientGone()) {
      this.run(); // catches what throws on its path
      return;
    }
    try {
      this.log(
        'client_reset',
        undefined,
        `client reset the stream before it was routed (code ${this.#down.closeCode()})`,
      );
    } catch (err) {
      this.#ctx.runtime.logger.error({ err }, 'http2 stream failed (internal error)');
    }
  }

  /** The router's own answer (errors.ts), and its access line. */
  #refuse(code: ResultCode, reason?: string): void {
    const down = this.#down;
    down.body.resume(); // discard what the client still sends on this stream
    const grpc = this.#grpc;
    this.log(code, recordAnswer(this.record, code, grpc, respondError(down, code, grpc, reason), reason), reason);
  }

  /**
   * A `policies:` rule fired on this stream (the record names it already): a close resets the
   * stream with CANCEL (HTTP/1.1: the connection is closed); an answer is the stream's response,
   * the policy's status, headers and body, and the connection goes on.
   */
  #policyFired(outcome: PolicyOutcome): void {
    const down = this.#down;
    const verdict = outcome.verdict;
    const reason = `policy ${outcome.rule ?? ''} (${outcome.policy ?? ''})`;
    down.body.resume(); // discard what the client still sends on this stream
    if (verdict.action !== 'answer' || down.headersSent) {
      down.abort(H2_CANCEL);
      this.log('policy_closed', undefined, reason);
      return;
    }
    const { status, headers, body } = verdict.answer;
    const fields: string[] = [];
    for (const [name, value] of headers) fields.push(down.h2 ? name.toLowerCase() : name, value);
    fields.push('content-length', String(body.length));
    // As respondError: the head, then end (node ends a HEAD response's stream without a body).
    down.respond(status, fields, false, false);
    if (down.method === 'HEAD' || body.length === 0) down.end();
    else {
      down.end(body);
      this.record.bytesOut += body.length;
    }
    this.log('policy_answered', status, reason);
  }

  run(): void {
    const down = this.#down;
    const ctx = this.#ctx;
    const { runtime } = ctx;
    // A stream runs on the engine its connection was accepted with (the listener pipeline's).
    const engine = down.conn?.engine ?? runtime.engine;
    // A throw on this stream's path is a broken invariant (bad input is refused above with a
    // typed error): logged with its stack, the stream reset, one access line; the connection
    // and the process carry on.
    try {
      let routed: Routed;
      try {
        routed = routeView(down, ctx.listener);
      } catch (e) {
        if (!isSwitchboardError(e)) throw e;
        this.#refuse(isPeerError(e) ? e.result : 'bad_request', e.message);
        return;
      }
      const { request } = routed;
      this.#request = request;
      const record = this.record;
      describeRequest(record, request);

      // The decision every panel makes (src/routing/route.ts); CONNECT was refused by routeView already.
      const candidates = decideRoute(engine, ctx.listener, request, record, undefined, this);
      if (isRouteRefused(candidates)) {
        if (isPolicyFired(candidates)) this.#policyFired(candidates.fired);
        else this.#refuse(candidates.refused, candidates.reason);
        return;
      }

      // Pause until an exchange exists, so nothing of the body is read (or lost) before then.
      if (down.bodyLength !== 0 || !down.h2) down.body.pause();
      // A settled h2 session opens the stream at once (no promise); otherwise the attempts run.
      // One catch for the open and for what follows it: a throw in either (a broken invariant)
      // resets this stream and cancels what was opened for it; never an unhandled rejection.
      const pending = openExchange(routed, candidates, engine, ctx, down.bodyLength, down.conn?.socket, this);
      if (pending instanceof Promise) {
        const onEarlyClose = () => {
          this.#clientGone = true;
        };
        down.onClose(onEarlyClose);
        pending
          .then((result) => {
            down.offClose(onEarlyClose);
            this.#opened(result, candidates);
          })
          .catch((err) => this.#failed(err));
      } else {
        try {
          this.#opened(pending, candidates);
        } catch (err) {
          this.#failed(err);
        }
      }
    } catch (err) {
      runtime.logger.error({ err }, 'http2 stream failed (internal error): resetting it');
      this.log('internal_error', abortBroken(down), String(err));
    }
  }

  #opened(result: Opened<Exchange> | UpstreamFailure, candidates: Candidates): void {
    const record = this.record;
    record.attempts = result.attempts;
    if (isUpstreamFailure(result)) {
      if (this.clientGone()) this.log('client_closed', undefined, result.reason);
      else this.#refuse(result.result, result.reason);
      return;
    }
    record.backend = result.jack.backend.id;
    this.#exchange = result.value;
    if (this.#clientGone) {
      result.value.cancel(H2_CANCEL);
      this.log('client_closed', undefined, 'client went away while connecting');
      return;
    }
    // Cluster `outlierStatus`: the response status feeds passive health (src/upstream/outlier-judge.ts).
    const judge = responseJudgeFor(candidates, result.jack.backend.id, this.#ctx.runtime.registry);
    new Forwarding(this.#down, result.value, this, this.#grpc, judge).start();
  }

  #failed(err: unknown): void {
    const down = this.#down;
    // The client's head could not be sent (panels/http2/upstream-h2.ts): its answer, not a bug.
    if (isPeerError(err) && this.#exchange === undefined && !down.headersSent) {
      this.#refuse(err.result, err.message);
      return;
    }
    this.#ctx.runtime.logger.error({ err }, 'http2 stream failed (internal error): resetting it');
    this.#exchange?.cancel(H2_INTERNAL_ERROR);
    this.log('internal_error', abortBroken(down), String(err));
  }
}
