/**
 * The peer address of an accepted socket, read once per connection (the admission's client IP,
 * the access log's `client`, the Request's `peerIp`/`clientPort`).
 *
 * `socket.remoteAddress` makes a new object per socket, has getpeername fill it in (three
 * properties added from C++, a map transition each) and keeps it on the socket for as long as
 * the connection lives, so it is promoted with the socket. `readPeer` asks the socket's handle
 * to fill one object that every call reuses: same shape each time, nothing kept (issue 18: the
 * largest single item of an accept, bench/README.md "Shared deadlines").
 * A socket without a TCP handle of its own falls back to `remoteAddress`.
 */
import type { Socket } from 'node:net';

/** What getpeername reports; one object, filled again by every `readPeer` call. */
export interface Peer {
  address: string | undefined;
  family: string | undefined;
  port: number | undefined;
}

const scratch: Peer = { address: undefined, family: undefined, port: undefined };

type PeerHandle = { getpeername?: (out: Peer) => number };

/**
 * The peer of `socket` (address and port undefined when the kernel no longer knows it: a peer
 * that reset before the accept ran). The object is shared: read it before the next call.
 */
export function readPeer(socket: Socket): Peer {
  const handle = (socket as unknown as { _handle?: PeerHandle | null })._handle;
  if (typeof handle?.getpeername === 'function') {
    if (handle.getpeername(scratch) === 0) return scratch;
  } else {
    scratch.address = socket.remoteAddress;
    scratch.port = socket.remotePort;
    if (scratch.address !== undefined) return scratch;
  }
  scratch.address = undefined;
  scratch.family = undefined;
  scratch.port = undefined;
  return scratch;
}

/** The access log's `client`: `ip:port` of a peer, or `unknown` when the kernel no longer knew it. */
export function clientText(ip: string, port: number): string {
  return ip === '' ? 'unknown' : `${ip}:${port}`;
}

/** `ip:port` of the socket's peer, or `unknown` when the kernel no longer knows it. */
export function clientAddress(socket: Socket): string {
  const ip = socket.remoteAddress;
  const port = socket.remotePort;
  return ip === undefined || port === undefined ? 'unknown' : `${ip}:${port}`;
}
