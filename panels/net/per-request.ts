/**
 * Per-request routing on an HTTP/1 keep-alive connection (`routing: per-request`): every request
 * is routed on its own while the bytes pass through unmodified.
 *
 *   client ──► head (Http1HeadScanner) ─► route ─► body (BodyTracker) ─► wait for the response ─┐
 *               ▲     findAddresses + findJack:                                                  │
 *               │       current link │ pooled link │ new connection (retries)                    │
 *               └──────────────────── exchange complete (request and response forwarded) ◄──────┘
 *
 * 1. One exchange at a time: after a request has been forwarded, what the client sends next is
 *    held (at most maxHeaderBytes, then the client is paused) until the response is complete,
 *    so pipelined requests are answered in order and every request can go to another backend
 *    without two responses ever interleaving.
 * 2. A head is validated (hazard rows 1–13), then the body bytes already in hand are framed
 *    before anything is written, so a request refused for its head or for a chunk size in the
 *    same read never reaches a backend (answered 400, then closed).
 * 3. The chosen backend's link is the current one, an idle one this client used before
 *    (UpstreamPool), or a new connection with the cluster's PROXY header and retries.
 * 4. The router's own answers (404, 405, 502…) go out once the previous response is complete;
 *    they carry `Connection: close` and the connection closes.
 * 5. 101 or a 2xx to CONNECT makes the connection an opaque tunnel (src/splice.ts); bytes the
 *    client sent after such a request wait until the response decides what they are.
 * 6. A close-delimited response, a client `Connection: close`, or a client FIN end the
 *    connection after the exchange; a backend that closes is replaced for the next request.
 */
import type { Socket } from 'node:net';
import { endWithLinger } from '../../src/answer.ts';
import type { ListenerConfig } from '../../src/config/schema.ts';
import { channels } from '../../src/diagnostics.ts';
import type { Engine, PanelRuntime } from '../../src/engine.ts';
import { isSwitchboardError, RESULT_STATUS, type ResultCode } from '../../src/errors.ts';
import type { AccessRecord } from '../../src/log.ts';
import { BodyTracker } from '../../src/peek/body-tracker.ts';
import { type Http1Head, Http1HeadScanner } from '../../src/peek/http1.ts';
import type { Http1ResponseHead } from '../../src/peek/http1-response.ts';
import { errorResponse, statusOf } from '../../src/respond.ts';
import { splice } from '../../src/splice.ts';
import { type Attempt, type Candidates, isRefusal, type Request } from '../../src/types.ts';
import { openUpstream, type Upstream, type UpstreamFailure } from '../../src/upstream/index.ts';
import { Exchange } from './exchange.ts';
import { type LinkBreak, type LinkOwner, type LinkSettings, linkKey, UpstreamLink } from './upstream-link.ts';
import { firstPick, UpstreamPool } from './upstream-pool.ts';

/** What the net panel hands over once the first head of an HTTP/1 connection is peeked. */
export interface PerRequestStart {
  readonly client: Socket;
  readonly listener: ListenerConfig;
  readonly runtime: PanelRuntime;
  readonly engine: Engine;
  readonly head: Http1Head;
  /** The peeked bytes: the first head at offset 0, and whatever followed it. */
  readonly buffer: Buffer;
  readonly request: Request;
  /** The connection's access record (filled with the first request's route). */
  readonly connection: AccessRecord;
  /** Builds the Request of a later head (same connection facts); throws peer errors. */
  readonly requestFor: (head: Http1Head, buffer: Buffer) => Request;
  /** Ends the connection once, after the client socket has closed (its line, in connection mode). */
  readonly finish: (result: string, status?: number, reason?: string) => void;
  /** Writes one per-request access line; undefined when the config writes connection lines. */
  readonly requestLog: ((record: AccessRecord) => void) | undefined;
}

/** Runs a client connection in per-request mode until it closes. */
export function runPerRequest(start: PerRequestStart): void {
  new PerRequestDriver(start).begin();
}

type State = 'head' | 'body' | 'wait' | 'connecting' | 'tunnel' | 'closing';

const FIRST_ATTEMPT: Attempt = Object.freeze({ number: 1, failed: new Set<string>(), subclusters: [] });

class PerRequestDriver implements LinkOwner {
  readonly #s: PerRequestStart;
  get #requestLog(): ((record: AccessRecord) => void) | undefined {
    return this.#s.requestLog;
  }
  readonly #client: Socket;
  readonly #scanner: Http1HeadScanner;
  readonly #pool = new UpstreamPool();
  readonly #settings: LinkSettings;
  #state: State = 'head';
  #pending: Buffer | undefined;
  #body: BodyTracker | undefined;
  #exchange: Exchange | undefined;
  #link: UpstreamLink | undefined;
  #upBlocked = false;
  #clientEnded = false;
  #first = true;
  #result = 'ok';
  #linger: NodeJS.Timeout | undefined;
  /** Set by a graceful shutdown: close after the current response (or now, when idle). */
  #draining = false;
  #begun = false;
  readonly #undrain: () => void;

  constructor(s: PerRequestStart) {
    this.#s = s;
    this.#client = s.client;
    const { limits } = s.engine;
    this.#scanner = new Http1HeadScanner(limits.maxHeaderBytes);
    this.#settings = {
      client: s.client,
      registry: s.runtime.registry,
      maxHeaderBytes: limits.maxHeaderBytes,
      idleTimeout: limits.idleTimeout,
    };
    const c = s.client;
    c.on('data', this.#onData);
    c.on('end', this.#onEnd);
    c.on('error', this.#onError);
    c.once('close', this.#onClose);
    c.on('timeout', this.#onTimeout);
    if (limits.idleTimeout > 0) c.setTimeout(limits.idleTimeout);
    this.#undrain = s.runtime.drain.register({ drain: () => this.#drain() });
  }

  /** Graceful shutdown: between requests close now; otherwise after the current response. */
  #drain(): void {
    this.#draining = true;
    if (this.#begun && this.#state === 'head' && this.#exchange === undefined && this.#pending === undefined) {
      this.#close('ok');
    }
  }

  /** Routes the peeked first head and starts reading. */
  begin(): void {
    const { head, buffer, request } = this.#s;
    const consumed = this.#route(head, buffer, request);
    if (consumed >= 0) this.#process(buffer, consumed, 0);
    this.#begun = true;
    this.#flow();
  }

  // ── client side ──────────────────────────────────────────────────────────────────────────

  readonly #onData = (chunk: Buffer): void => {
    let buf = chunk;
    if (this.#pending !== undefined) {
      buf = Buffer.concat([this.#pending, chunk]);
      this.#pending = undefined;
    }
    if (this.#state === 'head' || this.#state === 'body') this.#process(buf, 0, 0);
    else if (this.#state !== 'closing') this.#pending = buf; // paused states: kept for later
    this.#flow();
  };

  /** Frames `buf` from `off`; bytes [from, off) are already framed and still to be forwarded. */
  #process(buf: Buffer, off: number, from: number): void {
    for (;;) {
      if (this.#state === 'body') {
        const body = this.#body!;
        if (!body.done && off < buf.length) {
          try {
            off += body.feed(buf, off);
          } catch (e) {
            if (!isSwitchboardError(e)) throw e;
            this.#bodyError(e.message);
            return;
          }
        }
        if (!body.done) break;
        this.#flush(buf, from, off);
        from = off;
        this.#requestSent();
        continue;
      }
      if (this.#state !== 'head') {
        if (off < buf.length && this.#state !== 'closing') this.#pending = buf.subarray(off);
        break;
      }
      if (off >= buf.length) break;
      const view = off === 0 ? buf : buf.subarray(off);
      let head: Http1Head | undefined;
      try {
        head = this.#scanner.feed(view);
      } catch (e) {
        if (!isSwitchboardError(e)) throw e;
        this.#refuse((e as { result?: ResultCode }).result ?? 'bad_request', e.message);
        return;
      }
      if (head === undefined) {
        this.#pending = view;
        break;
      }
      this.#scanner.reset();
      const consumed = this.#route(head, view);
      if (consumed < 0) return;
      from = off;
      off += consumed;
    }
    this.#flush(buf, from, off);
  }

  /** Writes request bytes [from, to) to the current link, pausing the client when it is full. */
  #flush(buf: Buffer, from: number, to: number): void {
    if (to <= from) return;
    if (this.#exchange !== undefined) this.#exchange.record.bytesIn += to - from;
    const link = this.#link;
    if (link === undefined || link.socket.destroyed) return;
    const ok = link.socket.write(from === 0 && to === buf.length ? buf : buf.subarray(from, to));
    if (!ok && !this.#upBlocked) {
      this.#upBlocked = true;
      link.socket.once('drain', this.#onUpDrain);
    }
  }

  readonly #onUpDrain = (): void => {
    this.#upBlocked = false;
    this.#flow();
  };

  /** Reads from the client only while a head or body is wanted and the backend keeps up. */
  #flow(): void {
    const c = this.#client;
    if (c.destroyed || this.#state === 'tunnel') return;
    if (this.#clientEnded && this.#state === 'head') {
      // The client has finished sending and nothing is in flight: nothing more can come.
      this.#close(this.#pending === undefined ? 'ok' : 'client_closed');
      return;
    }
    // While a response is awaited the client may still be read into `pending`, up to a bound:
    // pausing and resuming the socket for every request would cost two syscalls each time.
    const state = this.#state;
    const want =
      ((state === 'head' || state === 'body') && !this.#upBlocked) ||
      ((state === 'wait' || state === 'connecting') &&
        (this.#pending?.length ?? 0) < this.#s.engine.limits.maxHeaderBytes);
    if (want) {
      if (c.isPaused()) c.resume();
    } else if (this.#state !== 'closing' && !c.isPaused()) c.pause();
  }

  // ── routing ──────────────────────────────────────────────────────────────────────────────

  /**
   * Routes one complete head at offset 0 of `view`. Returns the bytes of `view` that now belong
   * to the request on the current link (head + body in hand), or -1 when it was refused or
   * waits for a connect (which resumes on its own).
   */
  #route(head: Http1Head, view: Buffer, given?: Request): number {
    const s = this.#s;
    let request: Request;
    try {
      request = given ?? s.requestFor(head, view);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      this.#refuse('bad_request', e.message);
      return -1;
    }
    const ex = new Exchange(s.listener.name, s.connection.client, this.#requestLog, head, request);
    this.#exchange = ex;
    if (head.method === 'CONNECT' && !s.listener.allowConnect) {
      this.#refuse('method_not_allowed', `CONNECT is not allowed on listener ${s.listener.name}`);
      return -1;
    }
    const body = new BodyTracker(head.bodyFraming);
    let fed: number;
    try {
      fed = body.feed(view, head.headLength);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      this.#refuse('bad_request', e.message);
      return -1;
    }
    const candidates = s.engine.book.findAddresses(request);
    if (channels.routeDecided.hasSubscribers)
      channels.routeDecided.publish({ request, candidates, socket: this.#client });
    if (candidates === undefined) {
      this.#refuse('no_route');
      return -1;
    }
    ex.record.product = candidates.product;
    ex.record.cluster = candidates.cluster;
    const pick = s.engine.operator.findJack(request, candidates, FIRST_ATTEMPT);
    if (isRefusal(pick)) {
      this.#refuse(pick.refused, `operator refused: ${pick.refused}`);
      return -1;
    }
    this.#body = body;
    const consumed = head.headLength + fed;
    const link = this.#linkFor(linkKey(pick.backend.id, candidates.policy, request));
    if (link !== undefined) {
      this.#start(link, undefined);
      return consumed;
    }
    this.#state = 'connecting';
    const { engine } = s;
    openUpstream(request, candidates, firstPick(engine.operator, pick), s.runtime, engine, true).then(
      (up) => this.#connected(up, request, candidates, view, consumed),
      (err: unknown) => {
        s.runtime.logger.error({ err }, 'per-request connect failed');
        this.#abort('upstream_error');
      },
    );
    return -1;
  }

  /** The current link if it serves `key`, else a pooled one (the current one is parked). */
  #linkFor(key: string): UpstreamLink | undefined {
    const cur = this.#link;
    if (cur !== undefined) {
      if (cur.key === key && cur.reusable && !cur.socket.destroyed) return cur;
      this.#setLink(undefined);
      if (cur.reusable && !cur.socket.destroyed) this.#pool.put(cur);
      else cur.destroy();
    }
    const pooled = this.#pool.take(key);
    if (pooled !== undefined) this.#setLink(pooled);
    return pooled;
  }

  #setLink(link: UpstreamLink | undefined): void {
    if (this.#upBlocked) {
      this.#link?.socket.removeListener('drain', this.#onUpDrain);
      this.#upBlocked = false;
    }
    this.#link = link;
  }

  /** Binds the routed exchange to `link`; the request's bytes follow. */
  #start(link: UpstreamLink, attempts: number | undefined): void {
    const ex = this.#exchange!;
    ex.record.backend = link.jack.backend.id;
    if (attempts !== undefined) ex.record.attempts = attempts;
    if (this.#first) {
      this.#first = false;
      const c = this.#s.connection;
      c.backend = ex.record.backend;
      if (ex.record.product !== undefined) c.product = ex.record.product;
      if (ex.record.cluster !== undefined) c.cluster = ex.record.cluster;
      if (attempts !== undefined) c.attempts = attempts;
    }
    link.expect(ex.method);
    this.#state = 'body';
  }

  #connected(
    up: Upstream | UpstreamFailure,
    request: Request,
    candidates: Candidates,
    view: Buffer,
    consumed: number,
  ): void {
    if (this.#state !== 'connecting') {
      if ('socket' in up) up.socket.destroy();
      return;
    }
    this.#exchange!.record.attempts = up.attempts;
    if (this.#first) this.#s.connection.attempts = up.attempts;
    if ('result' in up) {
      this.#refuse(up.result, up.reason);
      return;
    }
    const link = new UpstreamLink(up.socket, up.jack, candidates, request, this.#settings, this);
    this.#setLink(link);
    this.#start(link, up.attempts);
    const pending = this.#pending;
    this.#pending = undefined;
    const buf = pending === undefined ? view : Buffer.concat([view, pending]);
    this.#process(buf, consumed, 0);
    this.#flow();
  }

  // ── exchange lifecycle ───────────────────────────────────────────────────────────────────

  #requestSent(): void {
    const ex = this.#exchange!;
    ex.requestDone = true;
    this.#body = undefined;
    if (ex.responseDone) this.#complete();
    else this.#state = 'wait';
  }

  /** Both halves are forwarded: log, release a link the backend will close, go on or close. */
  #complete(): void {
    const ex = this.#exchange!;
    const link = this.#link;
    this.#exchange = undefined;
    ex.record.bytesOut = link?.bytesOut ?? 0;
    ex.finish('ok');
    if (link !== undefined && !link.reusable) {
      this.#setLink(undefined);
      link.socket.end();
    }
    if (ex.clientClose || link?.endsConnection === true || this.#draining) this.#close('ok');
    else this.#state = 'head';
  }

  /** Parses what the client sent while the last exchange was in flight. */
  #resumeParsing(): void {
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) this.#process(pending, 0, 0);
    this.#flow();
  }

  responseHead(link: UpstreamLink, head: Http1ResponseHead): void {
    if (link !== this.#link || this.#exchange === undefined) return;
    if (head.status >= 200 || head.status === 101) this.#exchange.record.status = head.status;
  }

  responseDone(link: UpstreamLink): void {
    const ex = this.#exchange;
    if (link !== this.#link || ex === undefined) return;
    ex.responseDone = true;
    if (ex.requestDone) {
      this.#complete();
      if (this.#state === 'head') this.#resumeParsing();
    } else if (!link.reusable) {
      // The backend answered early and will close: the rest of the request has nowhere to go.
      this.#exchange = undefined;
      ex.record.bytesOut = link.bytesOut;
      ex.finish('ok');
      this.#close('ok');
    }
  }

  tunnel(link: UpstreamLink): void {
    const ex = this.#exchange;
    if (link !== this.#link || ex === undefined) return;
    this.#state = 'tunnel';
    const c = this.#client;
    c.removeListener('data', this.#onData);
    c.removeListener('end', this.#onEnd);
    c.removeListener('timeout', this.#onTimeout);
    c.setTimeout(0);
    this.#setLink(undefined);
    this.#pool.destroyAll();
    const pending = this.#pending;
    this.#pending = undefined;
    const read = c.bytesRead;
    const written = c.bytesWritten;
    splice(c, link.socket, pending, this.#s.engine.limits.idleTimeout, (end) => {
      ex.record.bytesIn += c.bytesRead - read + (pending?.length ?? 0);
      ex.record.bytesOut = link.bytesOut + c.bytesWritten - written;
      ex.finish(end);
      this.#result = end;
      this.#finish();
    });
  }

  broken(link: UpstreamLink, why: LinkBreak, reason: string): void {
    this.#pool.forget(link);
    if (link !== this.#link || this.#state === 'closing' || this.#state === 'tunnel') return;
    this.#setLink(undefined);
    const ex = this.#exchange;
    if (ex === undefined) return;
    this.#exchange = undefined;
    ex.record.bytesOut = link.bytesOut;
    ex.finish(why, undefined, reason);
    // Nothing of the response went out: a clean close. Part of it did: cut it, so it shows.
    if (link.bytesOut === 0) this.#close(why);
    else this.#abort(why);
  }

  closed(link: UpstreamLink): void {
    this.#pool.forget(link);
    if (link === this.#link) this.#setLink(undefined);
  }

  // ── endings ──────────────────────────────────────────────────────────────────────────────

  /** A request the router answers itself: sent once nothing is in flight (always so here). */
  #refuse(code: ResultCode, reason?: string): void {
    const ex = this.#exchange ?? new Exchange(this.#s.listener.name, this.#s.connection.client, this.#requestLog);
    this.#exchange = undefined;
    ex.finish(code, statusOf(code), reason);
    this.#answer(code);
  }

  /** A request body the framing tracker cannot follow: 400 if nothing went out yet, else cut. */
  #bodyError(reason: string): void {
    const ex = this.#exchange!;
    const link = this.#link;
    this.#exchange = undefined;
    ex.finish('bad_request', 400, reason);
    this.#setLink(undefined);
    link?.destroy();
    if ((link?.bytesOut ?? 0) === 0 && !ex.responseDone) this.#answer('bad_request');
    else this.#abort('bad_request');
  }

  /** Writes the router's answer for `code` (Connection: close) and closes after a linger. */
  #answer(code: ResultCode): void {
    this.#stop(code);
    const c = this.#client;
    const bytes = errorResponse(code);
    if (bytes === undefined || c.destroyed) {
      c.destroy();
      return;
    }
    c.removeListener('data', this.#onData);
    this.#linger = endWithLinger(c, bytes);
  }

  /** Ends the client gracefully after what was written (its idle timeout still applies). */
  #close(result: string): void {
    if (this.#state === 'closing') return;
    this.#stop(result);
    this.#client.removeListener('data', this.#onData);
    this.#client.end();
    this.#client.resume();
  }

  /** Closes everything now. */
  #abort(result: string): void {
    this.#stop(result);
    this.#client.destroy();
  }

  #stop(result: string): void {
    this.#state = 'closing';
    this.#pending = undefined;
    if (this.#result === 'ok') this.#result = result;
    const link = this.#link;
    this.#setLink(undefined);
    link?.destroy();
    this.#pool.destroyAll();
  }

  readonly #onEnd = (): void => {
    this.#clientEnded = true;
    // A truncated body: pass the half-close on, as a splice would, and wait for the answer.
    if (this.#state === 'body') this.#link?.socket.end();
    this.#flow();
  };

  readonly #onError = (): void => {
    if (this.#state === 'tunnel') return;
    this.#exchange?.finish('client_error');
    this.#exchange = undefined;
    this.#abort('client_error');
  };

  readonly #onTimeout = (): void => {
    this.#exchange?.finish('idle_timeout');
    this.#exchange = undefined;
    this.#abort('idle_timeout');
  };

  readonly #onClose = (): void => {
    if (this.#state === 'tunnel') return;
    if (this.#exchange !== undefined) {
      this.#exchange.finish('client_closed');
      this.#exchange = undefined;
      this.#stop('client_closed');
    } else this.#stop('ok');
    this.#finish();
  };

  #finish(): void {
    this.#undrain();
    if (this.#linger !== undefined) clearTimeout(this.#linger);
    const result = this.#result;
    this.#s.finish(result, result in RESULT_STATUS ? statusOf(result as ResultCode) : undefined);
  }
}
