/**
 * One request/response exchange with a backend, the same shape whether the backend speaks
 * HTTP/2 (a stream on a pooled session) or HTTP/1.1 (a request on a keep-alive connection).
 * `stream-forward.ts` pipes the client's body into `body` and the response into the client with
 * backpressure; nothing is buffered beyond the streams' own high-water marks.
 */
import type { Readable, Writable } from 'node:stream';

/** The response head and body of an exchange. */
export interface UpstreamResponse {
  readonly status: number;
  /** Response fields as node's raw array (`[name, value, …]`), hop-by-hop fields dropped. */
  readonly headers: string[];
  /** The body; its end alone does not mean success (a reset may end it): wait for `complete`. */
  readonly body: Readable;
  /** The head ended the stream: an HTTP/2 trailers-only response (gRPC errors look like this). */
  readonly endStream: boolean;
  /**
   * HTTP/2 upstreams: whether the whole response is in already (the stream closed cleanly, its
   * body buffered) without trailer fields, so none can follow. Absent: never known early.
   */
  readonly completeWithoutTrailers?: () => boolean;
}

/** What an exchange reports back: `response`, then exactly one of `complete` or `failed`. */
export interface ExchangeEvents {
  /** The response head arrived (1xx heads are not reported). */
  response(res: UpstreamResponse): void;
  /** The response ended cleanly after its whole body, with these trailers (maybe none). */
  complete(trailers: Record<string, string>): void;
  /** The exchange failed or was reset; `h2Code` is the RST_STREAM code to mirror (0 = none). */
  failed(h2Code: number, reason: string): void;
}

/** An exchange that has a connection: request head accepted, body not yet sent. */
export interface Exchange {
  /** Where the request body goes. */
  readonly body: Writable;
  /** Ends the request body, with trailers when the client sent some. */
  finish(trailers: Record<string, string>): void;
  /** Abandons the exchange (the client went away): RST_STREAM `h2Code`, or the HTTP/1 socket destroyed. */
  cancel(h2Code: number): void;
  /** Starts reporting to `events` (called once, right after open). */
  listen(events: ExchangeEvents): void;
}

/** NGHTTP2_CANCEL: the client no longer wants the response (RFC 9113 §7). */
export const H2_CANCEL = 8;
