/**
 * The access log's `client` field for a socket. A peer that reset before the accept ran has no
 * address any more (getpeername fails, so Node reports `undefined`): it is logged as `unknown`.
 */
import type { Socket } from 'node:net';

/** `ip:port` of the socket's peer, or `unknown` when the kernel no longer knows it. */
export function clientAddress(socket: Socket): string {
  const ip = socket.remoteAddress;
  const port = socket.remotePort;
  return ip === undefined || port === undefined ? 'unknown' : `${ip}:${port}`;
}
