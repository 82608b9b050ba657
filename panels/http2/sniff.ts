/**
 * Plaintext listeners of the `http2` panel speak h2c with prior knowledge and HTTP/1.1 on the
 * same port: the first bytes decide (RFC 9113 §3.4).
 *
 * 1. Read until the bytes either differ from the 24-byte client preface (HTTP/1.1) or match
 *    all of it (h2c); `PRI` alone is also a valid HTTP/1 method, so a prefix decides nothing.
 * 2. Put the bytes back (`unshift`) and hand the socket to the HTTP/2 or the HTTP/1 server as
 *    if it had just been accepted there; both read the unshifted bytes first.
 * 3. The deadline is the panel's (head-deadline.ts): the first request, sniffing included, must
 *    arrive within what is left of `peekTimeout`; `sniffPreface` returns how to stop sniffing.
 */
import type { Socket } from 'node:net';
import { looksLikeH2c } from '../../src/peek/h2c.ts';

/**
 * Calls `decide(isH2c)` once the first bytes of `socket` tell; the bytes stay readable.
 * Returns the function that stops sniffing (the deadline passed).
 */
export function sniffPreface(socket: Socket, decide: (h2c: boolean) => void): () => void {
  const chunks: Buffer[] = [];
  const onReadable = () => {
    for (let c = socket.read() as Buffer | null; c !== null; c = socket.read() as Buffer | null) chunks.push(c);
    const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    chunks.length = 0;
    chunks.push(buf);
    const h2c = looksLikeH2c(buf);
    if (h2c === undefined) return;
    stop();
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
