/**
 * The Exchange view of one client stream towards an HTTP/2 backend (upstream-h2.ts opens it).
 *
 * One object per stream, which is also the `UpstreamResponse` it reports: no closure per
 * event. node calls a stream's listeners with the stream as `this`, so the listeners are
 * shared functions that find their exchange in a symbol slot of the stream (issue 18: each
 * closure and its context was a young-generation object per stream). One listener per event,
 * registered here; `closed` (the pool's own bookkeeping) runs first on 'close'; what `listen`
 * adds is only the response head. Errors before `listen` are not reported (the caller listens
 * right away). Events that fire once per stream get `on`, not `once` (no wrapper, no
 * `removeListener` event per stream); 'wantTrailers' gets a listener only when there are
 * trailers to send.
 */
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import type { Readable, Writable } from 'node:stream';
import type { Exchange, ExchangeEvents, UpstreamResponse } from './exchange.ts';
import { responseHeaders, trailerFields } from './headers.ts';

/** The END_STREAM flag of a HEADERS frame (RFC 9113 §6.2). */
const END_STREAM = 0x1;
const NO_FIELDS: Readonly<Record<string, string>> = Object.freeze(Object.create(null));
const kExchange = Symbol('switchboard.h2exchange');

type Tagged = ClientHttp2Stream & { [kExchange]: H2Exchange };

function hasFields(fields: Record<string, string>): boolean {
  for (const _ in fields) return true;
  return false;
}

/** Told when an exchange's stream closed (the pool counts open streams per session and client). */
export interface StreamCounter {
  /** The stream closed; `client`: the client connection it was opened for. */
  streamClosed(client: object | undefined): void;
  /** node refused a stream for want of stream ids: the session must take no more. */
  outOfStreams(): void;
}

function onError(this: Tagged, err: Error): void {
  const x = this[kExchange];
  if ((err as NodeJS.ErrnoException).code === 'ERR_HTTP2_OUT_OF_STREAMS') x.outOfStreams();
  x.fail(this.rstCode ?? 0, `upstream: ${err.message}`);
}
function onTrailers(this: Tagged, _t: IncomingHttpHeaders, _f: number, raw: string[]): void {
  this[kExchange].trailersIn = trailerFields(raw);
}
function onClose(this: Tagged): void {
  this[kExchange].closed();
}
function onResponse(this: Tagged, headers: IncomingHttpHeaders, flags: number, raw: string[]): void {
  this[kExchange].answer(headers, flags, raw);
}
function onWantTrailers(this: Tagged): void {
  this.sendTrailers(this[kExchange].trailersOut);
}

export class H2Exchange implements Exchange, UpstreamResponse {
  readonly #session: ClientHttp2Session;
  readonly #stream: ClientHttp2Stream;
  readonly #endStream: boolean;
  readonly #counter: StreamCounter;
  readonly #client: object | undefined;
  trailersOut: Readonly<Record<string, string>> = NO_FIELDS;
  trailersIn: Record<string, string> = NO_FIELDS;
  #events: ExchangeEvents | undefined = undefined;
  #answered = false;
  #reported = false;
  // The UpstreamResponse side, set when the head arrives.
  status = 0;
  headers: string[] = [];
  endStream = false;

  constructor(
    session: ClientHttp2Session,
    stream: ClientHttp2Stream,
    endStream: boolean,
    counter: StreamCounter,
    client: object | undefined,
  ) {
    this.#session = session;
    this.#client = client;
    this.#stream = stream;
    this.#endStream = endStream;
    this.#counter = counter;
    (stream as Tagged)[kExchange] = this;
    stream.on('error', onError);
    stream.on('trailers', onTrailers);
    stream.on('close', onClose);
  }

  get body(): Readable & Writable {
    return this.#stream;
  }

  /** Whether the whole response is in already (closed cleanly, no trailer fields): none can follow. */
  completeWithoutTrailers(): boolean {
    const stream = this.#stream;
    return stream.closed && (stream.rstCode ?? 0) === 0 && this.trailersIn === NO_FIELDS;
  }

  /** node ran out of stream ids on this session (the pool's own count should prevent it). */
  outOfStreams(): void {
    this.#counter.outOfStreams();
  }

  fail(code: number, reason: string): void {
    const events = this.#events;
    if (this.#reported || events === undefined) return;
    this.#reported = true;
    // The connection died under the stream: not a reset the backend chose, so no code to mirror.
    if (this.#session.destroyed) events.failed(0, 'upstream connection lost');
    else events.failed(code, reason);
  }

  closed(): void {
    this.#counter.streamClosed(this.#client);
    const code = this.#stream.rstCode ?? 0;
    // END_STREAM then close with NO_ERROR is success; any reset (or no response) is not.
    const events = this.#events;
    if (code === 0 && this.#answered && !this.#reported && events !== undefined) {
      this.#reported = true;
      events.complete(this.trailersIn);
    } else this.fail(code, `upstream: stream closed with code ${code}`);
  }

  answer(headers: IncomingHttpHeaders, flags: number, raw: string[]): void {
    this.#answered = true;
    this.status = Number(headers[':status']);
    this.headers = responseHeaders(raw);
    this.endStream = (flags & END_STREAM) !== 0;
    this.#events?.response(this);
  }

  finish(trailers: Record<string, string>): void {
    const stream = this.#stream;
    // 'wantTrailers' follows the end: with no listener node sends the empty trailing frame.
    if (!this.#endStream && hasFields(trailers)) {
      this.trailersOut = trailers;
      stream.on('wantTrailers', onWantTrailers);
    }
    if (!stream.writableEnded) stream.end();
  }

  cancel(h2Code: number): void {
    if (!this.#stream.destroyed) this.#stream.close(h2Code);
  }

  listen(listener: ExchangeEvents): void {
    this.#events = listener;
    this.#stream.on('response', onResponse);
  }
}
