/**
 * The client side of one stream, behind one small interface so that stream.ts, stream-forward.ts and
 * errors.ts are written once for both kinds of client:
 *
 *   H2Down  an HTTP/2 stream of node:http2's core API (`'stream'` event): no compat
 *           request/response objects, socket proxies or extra listeners per stream, which the
 *           profile of issue 18 showed to be a large share of the per-stream cost;
 *   H1Down  an HTTP/1.1 request and response of the fallback `node:http` server.
 *
 * Response trailers: an HTTP/2 response that may carry some is opened with `waitForTrailers`
 * and gets them (or none) when it ends; one that cannot (a router answer, a trailers-only
 * head) is opened without, so no empty trailing frame follows it. The option cannot be left
 * out until trailers show up: node lets `sendTrailers` run only on a stream opened with it
 * (ERR_HTTP2_TRAILERS_NOT_READY otherwise), so a response without it ends on its last DATA
 * frame and trailers that arrive after its head (unannounced ones included) would be dropped.
 *
 * Listeners: events that fire once per stream ('close', 'trailers', 'wantTrailers') get a
 * plain `on` listener, not `once` (whose wrapper and removal emit `newListener` and
 * `removeListener` on every http2 stream); 'wantTrailers' gets one only when there are
 * trailers to send (without one node sends the empty trailing frame itself).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { Connection } from '../../src/listener/connection.ts';

const NO_TRAILERS: Readonly<Record<string, string>> = Object.freeze(Object.create(null));
const DIGITS = /^\d+$/;
const noop = () => {};

function hasFields(fields: Record<string, string>): boolean {
  for (const _ in fields) return true;
  return false;
}

/** One client stream: its request head and body, and where its response goes. */
export interface Down {
  readonly h2: boolean;
  readonly method: string;
  /** `:path`, or the HTTP/1.1 request-target ('' when missing). */
  readonly target: string;
  /** `:authority` (HTTP/2 only). */
  readonly authority: string | undefined;
  /** `:scheme` (HTTP/2 only). */
  readonly scheme: string | undefined;
  /** The fields in wire order, `[name, value, …]`, pseudo-headers included (HTTP/2). */
  readonly rawHeaders: readonly string[];
  readonly contentType: string | undefined;
  /** The listener pipeline's connection this stream came on. */
  readonly conn: Connection | undefined;
  /** The client connection's socket (TLS when terminated). */
  readonly socket: Socket | undefined;
  /** The request body's length: a number, 0 for none, undefined for unknown (streamed). */
  readonly bodyLength: number | undefined;
  /** The request body. */
  readonly body: Readable;
  /** The request's trailer fields as sent (valid once `body` ended). */
  requestTrailers(): readonly string[];
  readonly headersSent: boolean;
  /** The response was ended (maybe not yet flushed). */
  readonly ended: boolean;
  /** Where response body bytes go once `respond` was called. */
  readonly out: Writable;
  /**
   * Sends the response head (`headers`: node's raw `[name, value, …]` array, taken over);
   * `trailers`: the response may end with trailer fields. Throws on a head node refuses.
   */
  respond(status: number, headers: string[], endStream: boolean, trailers: boolean): void;
  /** Ends the response (after `respond`), with `body` and trailer fields when given. */
  end(body?: string | Uint8Array, trailers?: Record<string, string>): void;
  /** Cuts the response: RST_STREAM `h2Code` on HTTP/2, the connection destroyed on HTTP/1.1. */
  abort(h2Code: number): void;
  onClose(fn: () => void): void;
  offClose(fn: () => void): void;
  /** The RST_STREAM code the stream closed with (0: none; HTTP/1.1: always 0). */
  closeCode(): number;
  /** The whole response went out. */
  flushed(): boolean;
}

/** An HTTP/2 stream of the core API. */
export class H2Down implements Down {
  readonly h2 = true;
  readonly method: string;
  readonly target: string;
  readonly authority: string | undefined;
  readonly scheme: string | undefined;
  readonly rawHeaders: readonly string[];
  readonly contentType: string | undefined;
  readonly conn: Connection | undefined;
  readonly socket: Socket | undefined;
  readonly bodyLength: number | undefined;
  readonly stream: ServerHttp2Stream;
  #trailersIn: readonly string[] = [];
  #trailersOut: Readonly<Record<string, string>> = NO_TRAILERS;

  constructor(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    raw: readonly string[],
    conn: Connection | undefined,
    socket: Socket | undefined,
  ) {
    this.stream = stream;
    // Errors end the stream ('close' follows); what failed is reported from there.
    stream.on('error', noop);
    this.method = (headers[':method'] as string | undefined) ?? 'GET';
    this.target = (headers[':path'] as string | undefined) ?? '';
    this.authority = headers[':authority'] as string | undefined;
    this.scheme = headers[':scheme'] as string | undefined;
    this.rawHeaders = raw;
    this.contentType = headers['content-type'];
    this.conn = conn;
    this.socket = socket;
    if (stream.endAfterHeaders) this.bodyLength = 0;
    else {
      const cl = headers['content-length'];
      this.bodyLength = cl !== undefined && DIGITS.test(cl) ? Number(cl) : undefined;
      stream.on('trailers', (_t, _f, rawTrailers: string[]) => {
        this.#trailersIn = rawTrailers;
      });
    }
  }

  get body(): Readable {
    return this.stream;
  }
  get out(): Writable {
    return this.stream;
  }
  get headersSent(): boolean {
    return this.stream.headersSent;
  }
  get ended(): boolean {
    return this.stream.writableEnded;
  }
  requestTrailers(): readonly string[] {
    return this.#trailersIn;
  }

  respond(status: number, headers: string[], endStream: boolean, trailers: boolean): void {
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    headers.unshift(':status', String(status));
    const waitForTrailers = trailers && !endStream;
    stream.respond(headers, { endStream, waitForTrailers });
  }

  #sendTrailers(): void {
    if (!this.stream.destroyed) this.stream.sendTrailers(this.#trailersOut);
  }

  end(body?: string | Uint8Array, trailers?: Record<string, string>): void {
    // 'wantTrailers' follows the end: with no listener node sends the empty trailing frame.
    if (trailers !== undefined && hasFields(trailers)) {
      this.#trailersOut = trailers;
      this.stream.on('wantTrailers', () => this.#sendTrailers());
    }
    if (body === undefined) this.stream.end();
    else this.stream.end(body);
  }

  abort(h2Code: number): void {
    if (!this.stream.destroyed) this.stream.close(h2Code);
  }
  onClose(fn: () => void): void {
    this.stream.on('close', fn);
  }
  offClose(fn: () => void): void {
    this.stream.removeListener('close', fn);
  }
  closeCode(): number {
    return this.stream.rstCode ?? 0;
  }
  flushed(): boolean {
    return (this.stream.rstCode ?? 0) === 0;
  }
}

/** An HTTP/1.1 request and its response on the fallback server. */
export class H1Down implements Down {
  readonly h2 = false;
  readonly authority = undefined;
  readonly scheme = undefined;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly conn: Connection | undefined;
  readonly socket: Socket | undefined;
  readonly bodyLength: number | undefined;

  constructor(req: IncomingMessage, res: ServerResponse, conn: Connection | undefined) {
    this.req = req;
    this.res = res;
    this.conn = conn;
    this.socket = conn?.socket ?? req.socket;
    const cl = req.headers['content-length'];
    if (cl !== undefined && DIGITS.test(cl)) this.bodyLength = Number(cl);
    else this.bodyLength = req.headers['transfer-encoding'] === undefined ? 0 : undefined;
  }

  get method(): string {
    return this.req.method ?? 'GET';
  }
  get target(): string {
    return this.req.url ?? '';
  }
  get rawHeaders(): readonly string[] {
    return this.req.rawHeaders;
  }
  get contentType(): string | undefined {
    return this.req.headers['content-type'];
  }
  get body(): Readable {
    return this.req;
  }
  get out(): Writable {
    return this.res;
  }
  get headersSent(): boolean {
    return this.res.headersSent;
  }
  get ended(): boolean {
    return this.res.writableEnded;
  }
  requestTrailers(): readonly string[] {
    return this.req.rawTrailers;
  }
  respond(status: number, headers: string[]): void {
    this.res.writeHead(status, headers);
  }
  end(body?: string | Uint8Array, trailers?: Record<string, string>): void {
    if (trailers !== undefined && Object.keys(trailers).length > 0) this.res.addTrailers(trailers);
    if (body === undefined) this.res.end();
    else this.res.end(body);
  }
  abort(): void {
    this.res.destroy();
  }
  onClose(fn: () => void): void {
    this.res.once('close', fn);
  }
  offClose(fn: () => void): void {
    this.res.removeListener('close', fn);
  }
  closeCode(): number {
    return 0;
  }
  flushed(): boolean {
    return this.res.writableFinished;
  }
}
