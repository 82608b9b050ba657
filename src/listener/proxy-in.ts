/**
 * PROXY header in (step 3 of README.md): on a listener with `proxyProtocol`, the header is read
 * before anything else (before a TLS handshake too), under the connection's peek deadline. The
 * peer was already checked against `trustedSources` at accept.
 *
 *   socket ──data──► buffer ──parseProxyHeader──► need more ─┐
 *                      ▲                                     │
 *                      └─────────────────────────────────────┘
 *                           header ──► the bytes after it are put back (unshift) ──► next step
 *
 * A malformed or missing header, or a deadline that passes first, is `proxy_rejected`; a client
 * that goes away is `client_closed`. The socket is paused when the step ends, so the next step
 * (TLS handshake, peek, h2c sniff) reads the rest exactly as if it had just been accepted.
 */
import type { Socket } from 'node:net';
import { isSwitchboardError } from '../base/errors.ts';
import { type ProxyAccept, type ProxyHeader, parseProxyHeader } from '../proxy-protocol/index.ts';

/** Who waits for the header: exactly one of the two methods runs, once. */
export interface ProxyWaiter {
  proxyRead(header: ProxyHeader): void;
  proxyFailed(result: 'proxy_rejected' | 'client_closed', reason: string): void;
}

/** Reads one PROXY header of a version in `accept` from `socket` within `timeoutMs`. */
export function readProxyHeader(socket: Socket, accept: ProxyAccept, timeoutMs: number, waiter: ProxyWaiter): void {
  let buffer: Buffer | undefined;
  const settle = () => {
    clearTimeout(timer);
    socket.removeListener('data', onData);
    socket.removeListener('end', onEnd);
    socket.removeListener('error', onError);
    socket.removeListener('close', onClose);
    socket.pause();
  };
  const fail = (result: 'proxy_rejected' | 'client_closed', reason: string) => {
    settle();
    waiter.proxyFailed(result, reason);
  };
  const onData = (chunk: Buffer) => {
    buffer = buffer === undefined ? chunk : Buffer.concat([buffer, chunk]);
    let header: ProxyHeader | undefined;
    try {
      header = parseProxyHeader(buffer, accept);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      fail('proxy_rejected', e.message);
      return;
    }
    if (header === undefined) return;
    settle();
    if (buffer.length > header.length) socket.unshift(buffer.subarray(header.length));
    waiter.proxyRead(header);
  };
  const onEnd = () => fail('client_closed', 'client closed before the PROXY header was complete');
  // A socket destroyed locally (drain, limits) closes without 'end' or 'error'.
  const onClose = () => fail('client_closed', 'connection closed while reading the PROXY header');
  const onError = (err: Error) => fail('client_closed', `client error: ${err.message}`);
  const timer = setTimeout(
    () => fail('proxy_rejected', `PROXY header not complete within ${timeoutMs}ms`),
    Math.max(1, timeoutMs),
  );
  socket.on('data', onData);
  socket.on('end', onEnd);
  socket.on('error', onError);
  socket.on('close', onClose);
  socket.resume();
}
