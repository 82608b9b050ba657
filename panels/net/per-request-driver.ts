/**
 * The driver of one per-request connection (per-request.ts has the mechanism): a state machine
 * over the client socket, its current upstream link and the exchange in flight. It is the only
 * thing in this file, and it owns its state and the sequencing: the parts below it hear nothing
 * of it but through interfaces declared beside them (ClientListener, FramingSteps, LinkOwner,
 * WritableListener, IdleMember) or a callback, and reach it through those methods only.
 *
 *   head ──route──► body ──request sent──► wait ──response done──► head …
 *     │               └────────────────────────────────────────────► tunnel (101, CONNECT 2xx)
 *     └─ new link ─► connecting ─► body          any state ─► closing (answer, close, abort)
 *
 * Steps, in the order of a request: the client's bytes (onClientData, the framer's steps,
 * #flow), its route and link (#route, ClientLinks.forKey, #bind, #connect, #connected), a resend
 * on a new link (#resendOnNewLink, #resent), the exchange's end and the link's events
 * (requestSent, #complete, the LinkOwner methods), the connection's end (#refuse, #bodyError,
 * #answer, #close, #abort, #stop, #finish). Its parts: per-request-framing.ts (heads, bodies,
 * pending bytes), per-request-route.ts, per-request-links.ts (the current and idle links),
 * per-request-connect.ts, per-request-resend.ts, per-request-in-flight.ts (the exchange in flight
 * and its record, per-request-records.ts), per-request-tunnel.ts,
 * per-request-end.ts, per-request-idle.ts, per-request-client-events.ts, exchange.ts,
 * upstream-link.ts.
 */
import type { Socket } from 'node:net';
import { isSwitchboardError, type ResultCode } from '../../src/base/errors.ts';
import type { Candidates, Jack, Request } from '../../src/contracts/types.ts';
import type { Drainable } from '../../src/data-path/drain.ts';
import { http1PolicyAnswer } from '../../src/data-path/policy-answer.ts';
import type { Engine } from '../../src/panel/contract.ts';
import type { Http1Head } from '../../src/peek/http1.ts';
import { isUpstreamFailure, type Upstream, type UpstreamFailure } from '../../src/upstream/index.ts';
import { type ClientListener, handClientToTunnel, listenToClient } from './per-request-client-events.ts';
import { openLink } from './per-request-connect.ts';
import { ConnectionEnd, closeClient } from './per-request-end.ts';
import { RequestFramer } from './per-request-framing.ts';
import { type IdleMember, IdleSeat, Traffic } from './per-request-idle.ts';
import { ExchangeInFlight } from './per-request-in-flight.ts';
import { ClientLinks, type WritableListener } from './per-request-links.ts';
import { type Resend, resendFor, resendsAfter } from './per-request-resend.ts';
import { type PolicyHead, routeHead } from './per-request-route.ts';
import type { PerRequestStart } from './per-request-start.ts';
import type { DriverState, FramingSteps } from './per-request-steps.ts';
import { spliceTunnel } from './per-request-tunnel.ts';
import { type LinkBreak, type LinkOwner, type LinkSettings, linkKey, UpstreamLink } from './upstream-link.ts';

/**
 * One per-request client connection, from its first routed head until its access line. Each
 * event entry (ClientListener, LinkOwner, IdleMember, WritableListener) guards its step: a throw
 * (a broken invariant) ends in `#failed`, which closes this connection and releases its slot
 * instead of reaching the process.
 */
export class PerRequestDriver
  implements ClientListener, FramingSteps, LinkOwner, Drainable, IdleMember, WritableListener
{
  readonly #start: PerRequestStart;
  readonly #client: Socket;
  readonly #limits: Engine['limits'];
  readonly #links: ClientLinks;
  readonly #linkSettings: LinkSettings;
  #state: DriverState = 'head';
  /** The client's bytes framed into heads and bodies, and those not framed yet. */
  readonly #framer: RequestFramer;
  /** The exchange in flight and its record's bookkeeping. */
  readonly #inFlight: ExchangeInFlight;
  /** The current request's bytes while it may be sent once more (per-request-resend.ts). */
  #resend: Resend | undefined;
  #clientEnded = false;
  /** The connection's result, its answer's linger, its report (once). */
  readonly #end: ConnectionEnd;
  /** Set by a graceful shutdown: close after the current response (or now, when idle). */
  #draining = false;
  /** The first head was routed and framed: a drain may close between requests from now on. */
  #begun = false;
  /** Client reads, for the idle tick (per-request-idle.ts). */
  readonly #traffic = new Traffic();
  readonly #idle = new IdleSeat();

  constructor(start: PerRequestStart) {
    this.#start = start;
    const client = start.client;
    this.#client = client;
    this.#limits = start.engine.limits;
    this.#framer = new RequestFramer(this, this.#limits, start.listener.pathNormalization);
    this.#inFlight = new ExchangeInFlight(start);
    this.#links = new ClientLinks(this.#limits.maxIdleUpstreamsPerConnection, this);
    this.#linkSettings = {
      client,
      registry: start.runtime.registry,
      maxHeaderBytes: this.#limits.maxHeaderBytes,
    };
    listenToClient(client, this);
    if (this.#idle.take(this, this.#limits.idleTimeout)) {
      // The shared timer's next tick may come at once: it sees this as traffic, so the quiet
      // ticks start after it (a silent connection closes after idleTimeout, never before).
      this.#traffic.count++;
    }
    this.#end = new ConnectionEnd(start, this);
  }

  /**
   * Runs the connection from its peeked first `head` and its `request`; `buffer` holds the head
   * at offset 0 and whatever followed it (none of the three is kept once routed).
   */
  begin(head: Http1Head, buffer: Buffer, request: Request): void {
    try {
      const consumed = this.#route(head, buffer, request);
      if (consumed >= 0) this.#framer.frame(buffer, consumed, 0);
      this.#begun = true;
      this.#flow();
    } catch (err) {
      this.#failed(err);
    }
  }

  // ── the client side: framing heads and bodies, writing them upstream, flow control ──

  /** The client's 'data': bytes are framed before they are written (1 write per read). */
  onClientData(chunk: Buffer): void {
    this.#traffic.count++;
    try {
      this.#framer.read(chunk);
      this.#flow();
    } catch (err) {
      this.#failed(err);
    }
  }

  // FramingSteps: called by the framer inside the steps above and below (their catch guards them).

  /** FramingSteps: the connection's state. */
  get state(): DriverState {
    return this.#state;
  }

  /** FramingSteps: a later head, complete. */
  routeHead(head: Http1Head, view: Buffer): number {
    return this.#route(head, view, undefined);
  }

  /** FramingSteps: request bytes to the current link, pausing the client when it is full. */
  forward(bytes: Buffer): void {
    this.#inFlight.countIn(bytes.length);
    this.#links.write(bytes);
  }

  /** FramingSteps: a head that cannot be parsed. */
  refuseHead(code: ResultCode, reason: string, read: number): void {
    this.#refuse(code, reason, read);
  }

  /** FramingSteps: a body that cannot be framed after its head went upstream. */
  bodyFailed(reason: string): void {
    this.#bodyError(reason);
  }

  /** Reads from the client only while a head or body is wanted and the backend keeps up. */
  #flow(): void {
    const c = this.#client;
    const state = this.#state;
    if (c.destroyed || state === 'tunnel') return;
    if (this.#clientEnded && state === 'head') {
      // The client has finished sending and nothing is in flight: nothing more can come.
      this.#close(this.#framer.pending.empty ? 'ok' : 'client_closed');
      return;
    }
    // While a response is awaited the client may still be read into the pending bytes, up to a
    // bound: pausing and resuming the socket for every request would cost two syscalls each time.
    const want =
      ((state === 'head' || state === 'body') && !this.#links.full) ||
      ((state === 'wait' || state === 'connecting' || state === 'answering') &&
        this.#framer.pending.length < this.#limits.maxHeaderBytes);
    if (want) {
      if (c.isPaused()) c.resume();
    } else if (state !== 'closing' && !c.isPaused()) c.pause();
  }

  /** ClientLinks: the current link's socket took what was written; the client may be read again. */
  onLinkWritable(): void {
    try {
      this.#flow();
    } catch (err) {
      this.#failed(err);
    }
  }

  /** The client's 'end' (a FIN). */
  onClientEnd(): void {
    try {
      this.#clientEnded = true;
      // A truncated body: pass the half-close on, as a splice would, and wait for the answer.
      if (this.#state === 'body') this.#links.current?.socket.end();
      this.#flow();
    } catch (err) {
      this.#failed(err);
    }
  }

  /** Parses what the client sent while the last exchange was in flight. */
  #resumeParsing(): void {
    this.#framer.resume();
    this.#flow();
  }

  // ── a head's route and its link ──

  /**
   * Routes one complete head at offset 0 of `view`: its Request, its Exchange, the body bytes
   * in hand framed, decideRoute, the first pick; everything that can refuse it is decided before
   * a byte goes upstream. Returns the bytes of `view` that now belong to the request on the
   * current link (head + body in hand), or -1 when it was refused or waits for a connect (which
   * resumes on its own).
   */
  #route(head: Http1Head, view: Buffer, given: Request | undefined): number {
    const start = this.#start;
    let request: Request;
    try {
      request = given ?? start.requestFor(head);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      this.#refuse('bad_request', e.message, head.headLength);
      return -1;
    }
    const ex = this.#inFlight.open(head, request);
    const routed = routeHead(start, this.#client, head, view, request, ex.record, ex);
    if (routed.refused === 'policy') {
      this.#policyFired(routed, head, view);
      return -1;
    }
    if (routed.refused !== undefined) {
      this.#refuse(routed.refused, routed.reason, routed.read);
      return -1;
    }
    const { candidates, first, body, consumed } = routed;
    this.#framer.startBody(body);
    const link = this.#links.forKey(linkKey(first.backend.id, candidates.policy, request));
    if (link !== undefined) {
      this.#resend = resendFor(head.method, body.done, view, consumed, request, candidates);
      this.#bind(link, undefined);
      return consumed;
    }
    this.#resend = undefined;
    this.#connect(request, candidates, first, view, consumed);
    return -1;
  }

  /** Binds the routed exchange to `link` (`attempts`: of a new connection); the request's bytes follow. */
  #bind(link: UpstreamLink, attempts: number | undefined): void {
    const ex = this.#inFlight.bound(link.jack.backend.id, attempts);
    link.expect(ex.method, ex.upgradeTo);
    this.#state = 'body';
  }

  /**
   * A new connection through the upstream pipeline (per-request-connect.ts), starting with
   * `first` and retrying per the cluster policy; the client is read into the pending bytes
   * meanwhile.
   */
  #connect(request: Request, candidates: Candidates, first: Jack, view: Buffer, consumed: number): void {
    this.#state = 'connecting';
    openLink(
      this.#start,
      request,
      candidates,
      first,
      (up) => this.#connected(up, request, candidates, view, consumed),
      (e) => this.#failed(e),
    );
  }

  /**
   * The upstream pipeline is done: a new link for the exchange, or its refusal (a request the
   * outbound PROXY header cannot carry is answered like a failed connect: 431 for an AUTHORITY
   * longer than a host name). What the client sent meanwhile is framed now, and a FIN it sent
   * passed on if its body is still in flight. A connect that ends after the connection closed
   * destroys its socket.
   */
  #connected(
    up: Upstream | UpstreamFailure,
    request: Request,
    candidates: Candidates,
    view: Buffer,
    consumed: number,
  ): void {
    if (this.#state !== 'connecting') {
      if (!isUpstreamFailure(up)) up.socket.destroy();
      return;
    }
    this.#inFlight.connectAttempts(up.attempts);
    if (isUpstreamFailure(up)) {
      this.#refuse(up.result, up.reason, consumed);
      return;
    }
    const link = new UpstreamLink(up.socket, up.jack, candidates, request, this.#linkSettings, this);
    this.#links.use(link);
    this.#bind(link, up.attempts);
    const pending = this.#framer.pending.take();
    const buf = pending === undefined ? view : Buffer.concat([view, pending]);
    this.#framer.frame(buf, consumed, 0);
    // A client FIN that came while connecting, in the middle of a body: passed on now, as
    // onClientEnd does once a link is there (the backend may read to the end). (The framing moved
    // the state on: read through `state`, which TypeScript did not narrow to `connecting` above.)
    if (this.#clientEnded && this.state === 'body') this.#links.current?.socket.end();
    this.#flow();
  }

  /**
   * The reused link of a request kept in `resend` failed before any response byte: the request
   * goes once more, on a new connection (the upstream pipeline: findJack, connect, retries). The
   * client's next bytes wait as pending bytes meanwhile, as during any connect.
   */
  #resendOnNewLink(resend: Resend): void {
    this.#resend = undefined;
    this.#state = 'connecting';
    openLink(
      this.#start,
      resend.request,
      resend.candidates,
      undefined,
      (up) => this.#resent(up, resend),
      (e) => this.#failed(e),
    );
  }

  /** The resend's connection is up (or refused): the kept request is written, its response awaited. */
  #resent(up: Upstream | UpstreamFailure, resend: Resend): void {
    if (this.#state !== 'connecting') {
      if (!isUpstreamFailure(up)) up.socket.destroy();
      return;
    }
    const attempts = this.#inFlight.resendAttempts(up.attempts);
    if (isUpstreamFailure(up)) {
      this.#refuse(up.result, up.reason);
      return;
    }
    const link = new UpstreamLink(up.socket, up.jack, resend.candidates, resend.request, this.#linkSettings, this);
    this.#links.use(link);
    this.#bind(link, attempts);
    link.traffic.count++;
    link.socket.write(resend.bytes);
    this.#state = 'wait'; // the whole request is written (requestSent ran for it before)
    this.#flow();
  }

  // ── the exchange's end, and what the links report (LinkOwner) ──

  /** FramingSteps: the request's last byte was written upstream. */
  requestSent(): void {
    const ex = this.#inFlight.current!;
    ex.requestDone = true;
    if (ex.responseDone) this.#complete();
    else this.#state = 'wait';
  }

  /** Both halves are forwarded: log, release a link the backend will close, go on or close. */
  #complete(): void {
    const link = this.#links.current;
    const ex = this.#inFlight.completed(link?.bytesOut ?? 0);
    this.#resend = undefined;
    if (link !== undefined && !link.reusable) {
      this.#links.use(undefined);
      link.socket.end();
    }
    if (ex.clientClose || link?.endsConnection === true || this.#draining) this.#close('ok');
    else this.#state = 'head';
  }

  /** LinkOwner: a response head; a final status (or 101) is the exchange's. */
  responseHead(link: UpstreamLink, status: number): void {
    try {
      if (link === this.#links.current) this.#inFlight.responseStatus(status);
    } catch (err) {
      this.#failed(err);
    }
  }

  /** LinkOwner: the response was forwarded whole. */
  responseDone(link: UpstreamLink): void {
    try {
      const ex = this.#inFlight.current;
      if (link !== this.#links.current || ex === undefined) return;
      ex.responseDone = true;
      if (ex.requestDone) {
        this.#complete();
        if (this.#state === 'head') this.#resumeParsing();
      } else if (!link.reusable) {
        // The backend answered early and will close: the rest of the request has nowhere to go.
        this.#inFlight.completed(link.bytesOut);
        this.#close('ok');
      }
    } catch (err) {
      this.#failed(err);
    }
  }

  /** LinkOwner: 101 or a 2xx to CONNECT: the client and the link are spliced until either ends. */
  tunnel(link: UpstreamLink): void {
    try {
      const ex = this.#inFlight.current;
      if (link !== this.#links.current || ex === undefined) return;
      this.#state = 'tunnel';
      const c = this.#client;
      handClientToTunnel(c);
      this.#idle.leave();
      this.#links.use(undefined);
      this.#links.closeIdle();
      spliceTunnel(c, link, this.#framer.pending.take(), this.#limits.idleTimeout, ex, (end, reason) => {
        this.#end.tunnelled(end, reason);
        this.#finish();
      });
    } catch (err) {
      this.#failed(err);
    }
  }

  /**
   * LinkOwner: the link failed while a response was expected or in progress. Nothing of the
   * response went out: a request kept for a resend goes once more on a new connection, any
   * other is answered 502 (`bad_response` for a response the router cannot frame, a 101 nobody
   * asked for included; `upstream_reset` for a lost link). Part of it went out: the exchange
   * ends with why and the client is cut.
   */
  broken(link: UpstreamLink, why: LinkBreak, reason: string): void {
    try {
      this.#links.forget(link);
      if (link !== this.#links.current || this.#state === 'closing' || this.#state === 'tunnel') return;
      this.#links.use(undefined);
      const ex = this.#inFlight.current;
      if (ex === undefined) return;
      ex.record.bytesOut = link.bytesOut;
      const resend = this.#resend;
      this.#resend = undefined;
      if (link.bytesOut === 0) {
        // The reused link was closing as the request went out (its FIN not read yet): once more.
        if (resend !== undefined && ex.requestDone && resendsAfter(why)) {
          this.#resendOnNewLink(resend);
          return;
        }
        // Nothing of the response reached the client, so no answer can interleave: it gets the
        // router's 502 instead of a bare close, then a close. An idle timeout keeps its close.
        if (why !== 'idle_timeout') {
          this.#refuse(why === 'bad_response' ? 'bad_response' : 'upstream_reset', reason);
          return;
        }
      }
      this.#inFlight.end(why, undefined, reason);
      // Nothing of the response went out: a clean close. Part of it did: cut it, so it shows.
      if (link.bytesOut === 0) this.#close(why);
      else this.#abort(why);
    } catch (err) {
      this.#failed(err);
    }
  }

  /** LinkOwner: an idle link closed (pooled or between requests). */
  closed(link: UpstreamLink): void {
    try {
      this.#links.forget(link);
      if (link === this.#links.current) this.#links.use(undefined);
    } catch (err) {
      this.#failed(err);
    }
  }

  // ── the connection's end: the router's answers, closes and aborts, the last line ──

  /** Drainable (src/data-path/drain.ts), graceful shutdown: between requests close now; otherwise after the current response. */
  drain(): void {
    this.#draining = true;
    if (this.#begun && this.#state === 'head' && this.#inFlight.current === undefined && this.#framer.pending.empty)
      this.#close('ok');
  }

  /**
   * A request the router answers itself: sent once nothing is in flight (always so here: a head
   * is routed only after the previous response, and a broken response is answered only while
   * none of it went out). `read`: the request's bytes the router read and did not forward (its
   * head, the body in hand; all of a head it could not parse), counted in the line's `bytesIn`
   * as forwarded bytes are, so a refused request logs what it cost like a proxied one.
   */
  #refuse(code: ResultCode, reason?: string, read = 0): void {
    this.#inFlight.answered(code, reason, read, !this.#client.destroyed);
    this.#answer(code, reason);
  }

  /**
   * A `policies:` rule fired on the head just routed (nothing of it went upstream). A close
   * closes the connection. An answer is written in the router's own words; the connection goes
   * on after it when its framing allows: the request's body is all in hand (it is dropped, never
   * forwarded), the client did not ask to close, and it is no Upgrade or CONNECT. What followed
   * the request waits as pending bytes until the answer was written, then is parsed as the next
   * head, as after a backend's response. Otherwise the answer says `Connection: close`.
   */
  #policyFired(routed: PolicyHead, head: Http1Head, view: Buffer): void {
    const { fired, read } = routed;
    const verdict = fired.verdict;
    const reason = `policy ${fired.rule ?? ''} (${fired.policy ?? ''})`;
    this.#end.firedOn(fired.rule ?? '', verdict.action);
    const ex = this.#inFlight.current!;
    if (verdict.action !== 'answer' || this.#client.destroyed) {
      this.#inFlight.policyEnded('policy_closed', undefined, reason, read, 0);
      this.#abort('policy_closed');
      return;
    }
    const keepAlive = routed.bodyDone && !ex.clientClose && !ex.mayTunnel && !this.#draining;
    const bytes = http1PolicyAnswer(verdict.answer, keepAlive, head.method === 'HEAD');
    this.#inFlight.policyEnded('policy_answered', verdict.answer.status, reason, read, bytes.length);
    if (!keepAlive) {
      this.#stop('policy_answered');
      this.#end.answerWith(bytes);
      return;
    }
    if (read < view.length) this.#framer.pending.keep(view.subarray(read));
    this.#state = 'answering';
    this.#client.write(bytes, () => this.#policyAnswered());
  }

  /** The policy's answer was written: the next head is parsed (or the drain closes now). */
  #policyAnswered(): void {
    try {
      if (this.#state !== 'answering') return;
      this.#state = 'head';
      if (this.#draining) this.#close('ok');
      else this.#resumeParsing();
    } catch (err) {
      this.#failed(err);
    }
  }

  /** A request body the framing tracker cannot follow: 400 if nothing went out yet, else cut. */
  #bodyError(reason: string): void {
    const link = this.#links.current;
    const ex = this.#inFlight.end('bad_request', 400, reason)!;
    this.#links.use(undefined);
    link?.destroy();
    if ((link?.bytesOut ?? 0) === 0 && !ex.responseDone) this.#answer('bad_request');
    else this.#abort('bad_request');
  }

  /** Writes the router's answer for `code` (Connection: close) and closes after a linger. */
  #answer(code: ResultCode, reason?: string): void {
    this.#stop(code);
    this.#end.answer(code, reason);
  }

  /** Ends the client gracefully after what was written (its idle timeout still applies). */
  #close(result: string): void {
    if (this.#state === 'closing') return;
    this.#stop(result);
    closeClient(this.#client);
  }

  /** Closes everything now. */
  #abort(result: string): void {
    this.#stop(result);
    this.#client.destroy();
  }

  /** State `closing`: every link closed, the first non-ok result kept. */
  #stop(result: string): void {
    this.#state = 'closing';
    this.#framer.pending.take();
    this.#resend = undefined;
    this.#end.keep(result);
    this.#links.closeAll();
  }

  /** The client's 'error' (a reset, or the pipeline's half-close or lifetime bound). */
  onClientError(err: Error): void {
    try {
      if (this.#state === 'tunnel') return;
      const reason = `client: ${err.message}`;
      this.#inFlight.end('client_error', undefined, reason);
      if (this.#end.ok) this.#start.connectionRecord.reason = reason;
      this.#abort('client_error');
    } catch (e) {
      this.#failed(e);
    }
  }

  /** The client's 'close': the end of the connection, unless a tunnel owns it. */
  onClientClose(): void {
    try {
      if (this.#state === 'tunnel') return;
      this.#stop(this.#inFlight.end('client_closed') === undefined ? 'ok' : 'client_closed');
      this.#finish();
    } catch (err) {
      this.#failed(err);
    }
  }

  /** IdleMember: one tick of the shared idle timer (per-request-idle.ts). */
  idleTick(): void {
    if (!this.#idle.taken) return; // left the ticker during this walk
    try {
      const link = this.#links.current;
      const linkQuiet = link === undefined || link.traffic.tick();
      if (this.#traffic.tick(linkQuiet) && this.#traffic.idle) {
        this.#idle.leave();
        this.#inFlight.end('idle_timeout');
        this.#abort('idle_timeout');
        return;
      }
      if (link?.traffic.idle) link.onTimeout();
      this.#links.tickIdle();
    } catch (err) {
      this.#idle.leave();
      this.#failed(err);
    }
  }

  /**
   * A throw on this connection's path (a broken invariant, never bad input: that is refused with
   * a typed error): logged with its stack, the connection and its links closed, its end reported
   * once so its admission slot goes back. The other connections carry on.
   */
  #failed(err: unknown): void {
    this.#start.runtime.logger.error({ err }, 'per-request connection failed (internal error): closing it');
    this.#inFlight.end('internal_error');
    try {
      this.#abort('internal_error');
    } finally {
      // 'close' already went by (the throw came from it, or from a tunnel's end): end it here.
      if (this.#client.closed) this.#finish();
    }
  }

  /** The connection's result, once: its access line (connection lines) or its end. */
  #finish(): void {
    this.#idle.leave();
    this.#end.report();
  }
}
