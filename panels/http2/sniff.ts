/**
 * Plaintext listeners of the `http2` panel speak h2c with prior knowledge and HTTP/1.1 on the
 * same port: the first bytes decide (RFC 9113 §3.4).
 *
 * 1. Read until the bytes either differ from the 24-byte client preface or match all of it
 *    (h2c); `PRI` alone is also a valid HTTP/1 method, so a prefix decides nothing.
 * 2. Bytes that differ are HTTP/1.1 when they start with a method node's HTTP/1 server takes
 *    and a space. Bytes that cannot be HTTP/1 (the preface's `PRI * HTTP/2.0` line followed by
 *    anything but the rest of the preface, or no known method: h2spec 3.5/2) get GOAWAY
 *    PROTOCOL_ERROR (RFC 9113 §3.4: an invalid preface is a connection error), not the HTTP/1
 *    server's 400, and the connection is closed.
 * 3. Put the bytes back (`unshift`) and hand the socket to the HTTP/2 or the HTTP/1 server as
 *    if it had just been accepted there; both read the unshifted bytes first.
 * 4. The deadline is the panel's (head-deadline.ts): the first request, sniffing included, must
 *    arrive within what is left of `peekTimeout`; `sniffPreface` returns how to stop sniffing.
 */
import { METHODS } from 'node:http';
import type { Socket } from 'node:net';
import { answer } from '../../src/data-path/answer.ts';
import { H2_ERROR, looksLikeH2c, startsLikeH2c } from '../../src/peek/h2c.ts';

/** CRLFs taken before a request line. */
const MAX_LEADING_EMPTY_LINES = 8;

/** The methods node's HTTP/1 parser takes, as the bytes that start a request line. */
const METHOD_PREFIXES: readonly Buffer[] = METHODS.map((m) => Buffer.from(`${m} `, 'latin1'));

/**
 * Whether `buf` (not the h2c preface) can start an HTTP/1 request: true, false, or undefined
 * while too few bytes tell.
 */
export function couldBeHttp1(buf: Buffer): boolean | undefined {
  // The preface's own request line: no HTTP/1.x request has version 2.0.
  if (startsLikeH2c(buf) === true) return false;
  // Empty lines before a request line are allowed (RFC 9112 §2.2).
  let at = 0;
  while (at < buf.length && (buf[at] === 0x0d || buf[at] === 0x0a)) at++;
  if (at > MAX_LEADING_EMPTY_LINES * 2) return false;
  let more = at === buf.length;
  for (const m of METHOD_PREFIXES) {
    const n = Math.min(m.length, buf.length - at);
    if (buf.compare(m, 0, n, at, at + n) !== 0) continue;
    if (n === m.length) return true;
    more = true;
  }
  return more ? undefined : false;
}

/**
 * Calls `decide(isH2c)` once the first bytes of `socket` tell; the bytes stay readable. Bytes
 * that are neither get GOAWAY PROTOCOL_ERROR and a close, then `refused(reason)` when given.
 * Returns the function that stops sniffing (the deadline passed).
 */
export function sniffPreface(
  socket: Socket,
  decide: (h2c: boolean) => void,
  refused?: (reason: string) => void,
): () => void {
  const chunks: Buffer[] = [];
  const onReadable = () => {
    for (let c = socket.read() as Buffer | null; c !== null; c = socket.read() as Buffer | null) chunks.push(c);
    const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    chunks.length = 0;
    chunks.push(buf);
    const h2c = looksLikeH2c(buf);
    if (h2c === undefined) return;
    const h1 = h2c ? false : couldBeHttp1(buf);
    if (h1 === undefined) return;
    stop();
    if (!h2c && !h1) {
      answer(socket, 'bad_request', 'h2c', H2_ERROR.PROTOCOL_ERROR);
      refused?.('h2c: invalid connection preface (neither HTTP/2 nor HTTP/1)');
      return;
    }
    socket.unshift(buf);
    decide(h2c);
  };
  const onEnd = () => {
    stop();
    socket.destroy();
  };
  const stop = () => {
    socket.removeListener('readable', onReadable);
    socket.removeListener('end', onEnd);
    socket.removeListener('close', stop);
  };
  socket.on('readable', onReadable);
  socket.once('end', onEnd);
  socket.once('close', stop);
  return stop;
}
