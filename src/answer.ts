/**
 * The router's own answer on a client connection, then a close (DESIGN "What the router itself
 * answers"): HTTP/1 gets the short error response for the code, h2c a GOAWAY, TLS and PROXY
 * failures a plain close. Every panel and routing mode answers through here.
 *
 *   answer(code) ──► bytes for the protocol ──► end(bytes) ──► keep reading (discarded) ──► destroy
 *                                                              └── at most LINGER_MS ──────┘
 *                                                              └── at most LINGER_BYTES ───┘
 *
 * Reading on after the answer keeps the close from turning into a reset (unread data makes the
 * kernel send RST, which can discard the answer before the client read it). The linger reads at
 * most LINGER_BYTES, then closes: a refused client that keeps sending was read at full speed
 * (1–3 GB in 2 s, issue 40 item 5); HAProxy closes after about 36 KB.
 */
import type { Socket } from 'node:net';
import type { ResultCode } from './errors.ts';
import { goawayFrame, H2_ERROR } from './peek/h2c.ts';
import { errorResponse } from './respond.ts';

/** How long a closing connection keeps draining what the client still sends. */
export const LINGER_MS = 2_000;

/** How many bytes a closing connection reads (and discards) before it is closed anyway. */
export const LINGER_BYTES = 64 * 1024;

/** The protocols an answer can be given in; anything else is closed without one. */
export type Answerable = 'http1' | 'h2c' | 'tls' | 'proxy' | 'unknown';

/** Writes `bytes`, ends the socket and destroys it after the linger; returns the linger timer. */
export function endWithLinger(socket: Socket, bytes: Buffer): NodeJS.Timeout {
  socket.end(bytes);
  discardUpTo(socket, LINGER_BYTES);
  return setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

const kLingerUntil = Symbol('switchboard.lingerUntil');
type Lingering = Socket & { [kLingerUntil]?: number };

/**
 * Reads what the client still sends and drops it, until `max` more bytes were read: then the
 * socket is destroyed (what the client sends beyond is not worth reading). One listener shared
 * by every lingering socket, the bound in a symbol slot.
 */
export function discardUpTo(socket: Socket, max: number): void {
  (socket as Lingering)[kLingerUntil] = socket.bytesRead + max;
  socket.on('data', lingerData);
  socket.resume();
}

function lingerData(this: Lingering): void {
  if (this.bytesRead > (this[kLingerUntil] ?? 0)) this.destroy();
}

/** Answers with the router's error for `code` in the client's protocol, then closes. */
export function answer(socket: Socket, code: ResultCode, protocol: Answerable, h2Code?: number, reason?: string): void {
  let bytes: Buffer | undefined;
  if (protocol === 'http1') bytes = errorResponse(code, reason);
  else if (protocol === 'h2c') {
    bytes = goawayFrame(h2Code ?? (code === 'peek_timeout' ? H2_ERROR.NO_ERROR : H2_ERROR.REFUSED_STREAM));
  }
  if (bytes === undefined || socket.destroyed) socket.destroy();
  else endWithLinger(socket, bytes);
}
