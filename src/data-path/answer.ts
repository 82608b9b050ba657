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
 *
 * The HTTP/1 answers themselves are short, `Connection: close`, with `X-Switchboard-Error: <code>`,
 * built once per code at load time (`errorResponse`); the http2 panel writes the same status and
 * body in its own framing (`statusOf`, `answerBody`).
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { RESULT_STATUS, type ResultCode } from '../base/errors.ts';
import { goawayFrame, H2_ERROR } from '../peek/h2c.ts';

const responses = new Map<ResultCode, Buffer>();
for (const [code, status] of Object.entries(RESULT_STATUS) as [ResultCode, number][]) {
  if (status === 0) continue;
  const body = `${code}\n`;
  responses.set(
    code,
    Buffer.from(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n` +
        `Connection: close\r\nX-Switchboard-Error: ${code}\r\n\r\n${body}`,
      'latin1',
    ),
  );
}

/**
 * The response bytes for `code`, or undefined for codes answered by closing (proxy_rejected).
 * `acme_challenge` is the one answer with a body of its own: `reason` is the key authorization.
 */
export function errorResponse(code: ResultCode, reason?: string): Buffer | undefined {
  if (code === 'acme_challenge' && reason !== undefined) return challengeResponse(reason);
  return responses.get(code);
}

/** The body of the router's own answer for `code` (the HTTP/2 panel writes it itself). */
export function answerBody(code: ResultCode, reason?: string): string {
  return code === 'acme_challenge' && reason !== undefined ? reason : `${code}\n`;
}

/** HTTP-01 (RFC 8555 §8.3): 200 with the key authorization as the body. */
function challengeResponse(keyAuthorization: string): Buffer {
  const body = Buffer.from(keyAuthorization, 'latin1');
  return Buffer.concat([
    Buffer.from(
      `HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n` +
        'Connection: close\r\nX-Switchboard-Error: acme_challenge\r\n\r\n',
      'latin1',
    ),
    body,
  ]);
}

/** The HTTP status for `code` (0 = close without a response). */
export function statusOf(code: ResultCode): number {
  return RESULT_STATUS[code];
}

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
