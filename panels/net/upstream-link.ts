/**
 * One upstream connection of a per-request client connection, and the framing of the responses
 * it sends back (never rewritten):
 *
 *   backend ──data──► [ head (Http1ResponseScanner) │ body (BodyTracker) ] ──one write per read──► client
 *                       1xx: forwarded, next head    done → owner.responseDone
 *                       101 / CONNECT 2xx → owner.tunnel (no more parsing)
 *                       unframeable, or a 101 nobody asked for → owner.broken('bad_response')
 *
 * 1. `expect(method, upgradeTo)` arms the link for the response to one request; bytes from an
 *    idle link are a protocol violation and close it. A 101 becomes a tunnel only if the request
 *    offered the protocol it switches to (src/peek/http1-response.ts step 5); a 2xx only for
 *    CONNECT.
 * 2. Each read is framed in place and the contiguous bytes that belong to the response are
 *    written to the client in one write; when the client's buffer is full the backend is paused
 *    until 'drain' (backpressure).
 * 3. `reusable` turns false on `Connection: close`, a close-delimited body, a FIN, or bytes past
 *    the end of a response: the driver then opens a new connection for the next request (after
 *    `Connection: close` or a close-delimited body the client was told the connection ends, so
 *    the driver closes it instead).
 * 4. Each final status is judged by the cluster's `outlierStatus` (src/upstream/outlier-judge.ts:
 *    a match is reported to the registry as a failure, any other status breaks the failure
 *    streak). The response is forwarded either way.
 * 5. Reads come into reused buffers (src/data-path/own-reads.ts): a partial head held for the next read,
 *    and a write to the client that waits, keep the buffer they refer to; a tunnel's bytes are
 *    held between `detach` and the splice that takes the socket over.
 */
import type { Socket } from 'node:net';
import { isSwitchboardError } from '../../src/base/errors.ts';
import type { BackendRegistry } from '../../src/contracts/backend-registry.ts';
import type { Candidates, ClusterPolicy, Jack, Request } from '../../src/contracts/types.ts';
import { hasOwnReads, keep, releaseReads, takeReads } from '../../src/data-path/own-reads.ts';
import { type BodyTracker, releaseTracker, takeTracker } from '../../src/peek/body-tracker.ts';
import type { Http1ResponseScanner } from '../../src/peek/http1-response.ts';
import { releaseResponseScanner, takeResponseScanner } from '../../src/peek/scanner-spares.ts';
import { type ResponseJudge, responseJudgeFor } from '../../src/upstream/outlier-judge.ts';
import { Traffic } from './per-request-idle.ts';

/** Why a busy link stopped before its response was complete. */
export type LinkBreak = 'upstream_error' | 'upstream_closed' | 'bad_response' | 'idle_timeout';

/** What the driver hears from a link. */
export interface LinkOwner {
  /** A response head (interim or final) with `status` is about to be forwarded. */
  responseHead(link: UpstreamLink, status: number): void;
  /** The response to the armed request has been written to the client. */
  responseDone(link: UpstreamLink): void;
  /** 101 or a 2xx to CONNECT was written to the client: the link is now an opaque tunnel. */
  tunnel(link: UpstreamLink): void;
  /** The link failed while a response was expected or in progress. */
  broken(link: UpstreamLink, why: LinkBreak, reason: string): void;
  /** An idle link closed (pooled or between requests). */
  closed(link: UpstreamLink): void;
}

/** Settings shared by every link of one client connection. */
export interface LinkSettings {
  readonly client: Socket;
  readonly registry: BackendRegistry;
  readonly maxHeaderBytes: number;
}

/**
 * The pool key of a backend. With an outbound PROXY header the connection names one client and
 * VIP, so they are part of the key: a request naming another client (`clientIpFrom: header`)
 * never reuses a connection whose header named someone else.
 */
export function linkKey(backendId: string, policy: ClusterPolicy, request: Request): string {
  if (policy.proxyProtocol === 'off') return backendId;
  return `${backendId}|${policy.proxyProtocol}|${request.clientIp}:${request.clientPort}|${request.vip ?? ''}:${request.vipPort ?? ''}`;
}

/** One upstream socket and the response framing state on it. */
export class UpstreamLink {
  readonly socket: Socket;
  readonly jack: Jack;
  readonly key: string;
  /** False once the backend will not take another request on this connection. */
  reusable = true;
  /**
   * True when the last response ends the connection (`Connection: close`, or a body delimited
   * by the close): the client was told so by the forwarded bytes, so the router closes it too
   * (RFC 9112 §9.6).
   */
  endsConnection = false;
  #closeDelimited = false;
  /** Response bytes written to the client since the last `expect`. */
  bytesOut = 0;
  /**
   * Traffic count (reads, drains, and the request bytes the driver writes) and the idle tick's
   * view of it (per-request-idle.ts: the link's idle timeout).
   */
  readonly traffic = new Traffic();
  readonly #settings: LinkSettings;
  readonly #owner: LinkOwner;
  /** Undefined when the cluster has no `outlierStatus`. */
  readonly #judge: ResponseJudge | undefined;
  /** The scanner of a response head split across reads (scanner-spares.ts: none between heads). */
  #scanner: Http1ResponseScanner | undefined;
  #method: string | undefined;
  #upgradeTo: readonly string[] = [];
  #pendingHead: Buffer | undefined;
  /** The response body's tracker, taken per response and given back when it is done. */
  #body: BodyTracker | undefined;
  #gone = false;
  #waitingDrain = false;

  constructor(
    socket: Socket,
    jack: Jack,
    candidates: Candidates,
    request: Request,
    settings: LinkSettings,
    owner: LinkOwner,
  ) {
    this.socket = socket;
    this.jack = jack;
    this.key = linkKey(jack.backend.id, candidates.policy, request);
    this.#settings = settings;
    this.#owner = owner;
    this.#judge = responseJudgeFor(candidates, jack.backend.id, settings.registry);
    (socket as LinkSocket)[kLink] = this;
    if (hasOwnReads(socket)) takeReads(socket, linkChunk);
    else socket.on('data', linkData);
    socket.on('end', linkEnd);
    socket.on('error', linkError);
    socket.on('close', linkClose); // 'close' comes once: no `once` wrapper per connection
    socket.resume();
  }

  /** True while a response is expected or being forwarded. */
  get busy(): boolean {
    return this.#method !== undefined;
  }

  /**
   * Arms the link for the response to a request with `method` that offered `upgradeTo` (its
   * Http1Head.upgradeTo; empty when it did not ask to upgrade).
   */
  expect(method: string, upgradeTo: readonly string[] = []): void {
    this.#method = method;
    this.#upgradeTo = upgradeTo;
    this.bytesOut = 0;
    this.#scanner = undefined;
    this.#pendingHead = undefined;
    this.#body = undefined;
  }

  /** Stops listening for data (the tunnel takes the socket over). */
  detach(): void {
    if (hasOwnReads(this.socket))
      releaseReads(this.socket); // held until the tunnel takes them
    else this.socket.removeListener('data', linkData);
    this.socket.removeListener('end', linkEnd);
    this.#method = undefined;
    this.#gone = true;
  }

  /** Closes the link now. */
  destroy(): void {
    this.reusable = false;
    this.socket.destroy();
  }

  /** The socket's 'data' (through linkData). */
  onData(chunk: Buffer): void {
    this.traffic.count++;
    if (this.#method === undefined) {
      // Nothing was asked: a backend talking out of turn cannot be framed, so it is dropped.
      this.destroy();
      return;
    }
    let buf = chunk;
    if (this.#pendingHead !== undefined) {
      buf = Buffer.concat([this.#pendingHead, chunk]);
      this.#pendingHead = undefined;
    }
    try {
      this.#frame(buf);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      this.#break('bad_response', e.message);
    }
  }

  /** Frames `buf` from offset 0 and forwards what belongs to the response. */
  #frame(buf: Buffer): void {
    let off = 0;
    const from = 0;
    const method = this.#method!;
    while (off < buf.length) {
      if (this.#body === undefined) {
        const view = off === 0 ? buf : buf.subarray(off);
        const scanner = this.#scanner ?? takeResponseScanner(this.#settings.maxHeaderBytes);
        this.#scanner = undefined;
        const head = scanner.feed(view, method, this.#upgradeTo);
        if (head === undefined) {
          this.#scanner = scanner; // the rest of the head comes in a later read
          this.#pendingHead = view;
          if (hasOwnReads(this.socket)) keep(this.socket); // its bytes stay in the read's buffer
          break;
        }
        off += head.headLength;
        const status = head.status;
        const kind = head.bodyFraming.kind;
        this.#sawHead(status);
        if (kind === 'tunnel') {
          releaseResponseScanner(scanner);
          this.#forward(buf, from, buf.length);
          this.detach();
          this.#owner.tunnel(this);
          return;
        }
        if (status < 200) {
          releaseResponseScanner(scanner);
          continue; // interim (100-continue, 103): the final head follows
        }
        this.#closeDelimited = kind === 'close';
        this.endsConnection = head.connectionClose || this.#closeDelimited;
        if (this.endsConnection) this.reusable = false;
        this.#body = takeTracker(head.bodyFraming);
        releaseResponseScanner(scanner); // the head is overwritten by the scanner's next taker
      } else {
        off += this.#body.feed(buf, off);
      }
      if (this.#body.done) {
        // Bytes past the end of the response were never asked for: do not reuse this link.
        if (off < buf.length) this.reusable = false;
        this.#forward(buf, from, off);
        this.#responseDone();
        return;
      }
    }
    this.#forward(buf, from, off);
  }

  #sawHead(status: number): void {
    this.#judge?.judge(status);
    this.#owner.responseHead(this, status);
  }

  #responseDone(): void {
    this.#method = undefined;
    const body = this.#body;
    this.#body = undefined;
    if (body !== undefined) releaseTracker(body);
    this.#owner.responseDone(this);
  }

  /** Writes bytes [from, to) of `buf` to the client, pausing the backend if the client is full. */
  #forward(buf: Buffer, from: number, to: number): void {
    if (to <= from) return;
    this.bytesOut += to - from;
    const client = this.#settings.client;
    const ok = client.write(from === 0 && to === buf.length ? buf : buf.subarray(from, to));
    // A write that waits refers to the read's buffer (src/data-path/own-reads.ts): it is kept for it.
    if (client.writableLength > 0 && hasOwnReads(this.socket)) keep(this.socket);
    if (ok) return;
    if (this.#waitingDrain) return;
    this.#waitingDrain = true;
    this.socket.pause();
    client.once('drain', () => {
      this.#waitingDrain = false;
      this.traffic.count++;
      if (!this.#gone) this.socket.resume();
    });
  }

  /** The socket's 'end' (through linkEnd). */
  onEnd(): void {
    this.reusable = false;
    if (this.#body !== undefined && this.#closeDelimited) {
      // A close-delimited body ends here: the response is complete.
      this.#responseDone();
    } else if (this.#method !== undefined) {
      this.#break('upstream_closed', 'backend closed before the response was complete');
      return;
    }
    // Usually ended already (the response that ended the connection, per-request-driver.ts
    // #complete): a second end() does nothing but build an ERR_STREAM_ALREADY_FINISHED (with its
    // stack trace) and drop it, ~5 µs per connection (issue 18, newconn).
    const s = this.socket;
    if (!s.writableEnded && !s.destroyed) s.end();
  }

  /** The socket's 'error' (through linkError). */
  onError(err: Error): void {
    if (this.#method !== undefined) this.#break('upstream_error', err.message);
    this.socket.destroy();
  }

  /** No traffic within idleTimeout (per-request-idle.ts). */
  onTimeout(): void {
    if (this.#method !== undefined) this.#break('idle_timeout', 'no traffic within idleTimeout');
    else this.destroy();
  }

  /** The socket's 'close' (through linkClose). */
  onClose(): void {
    // The registry hears `closed` from the upstream pipeline (src/upstream/dial.ts).
    const wasBusy = this.#method !== undefined;
    this.reusable = false;
    if (this.#gone) return;
    this.#gone = true;
    if (wasBusy) this.#owner.broken(this, 'upstream_closed', 'backend connection closed');
    else this.#owner.closed(this);
  }

  /** Reports a busy link as broken (once) and closes it. */
  #break(why: LinkBreak, reason: string): void {
    this.#method = undefined;
    this.reusable = false;
    if (!this.#gone) {
      this.#gone = true;
      this.#owner.broken(this, why, reason);
    }
    this.socket.destroy();
  }
}

/**
 * The link of an upstream socket, in a symbol slot on the socket (the shared listeners below find
 * it there) rather than a WeakMap keyed by it: no hash probe per read (issue 18).
 */
const kLink = Symbol('switchboard.link');
type LinkSocket = Socket & { [kLink]?: UpstreamLink };

// One function per event for every link: no closure per upstream connection (issue 18).
function linkData(this: LinkSocket, chunk: Buffer): void {
  this[kLink]?.onData(chunk);
}
/** A read of a socket that reads into reused buffers (src/data-path/own-reads.ts); the link pauses it itself. */
function linkChunk(socket: Socket, chunk: Buffer): boolean {
  (socket as LinkSocket)[kLink]?.onData(chunk);
  return true;
}
function linkEnd(this: LinkSocket): void {
  this[kLink]?.onEnd();
}
function linkError(this: LinkSocket, err: Error): void {
  this[kLink]?.onError(err);
}
function linkClose(this: LinkSocket): void {
  this[kLink]?.onClose();
}
