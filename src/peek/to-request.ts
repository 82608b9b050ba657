/**
 * Turning what the peek found into the frozen `Request` routing reads, with the connection's
 * addresses: the PROXY source becomes the client address and the PROXY destination the VIP.
 */
import type { Socket } from 'node:net';
import { createRequest } from '../request.ts';
import type { Request } from '../types.ts';
import { normalizePath } from './path.ts';
import type { Peeked } from './peek.ts';

/** Connection facts that do not come from the peeked bytes. */
export interface ConnectionInfo {
  readonly listener: string;
  readonly socket: Socket;
}

/** Splits an h2 `:path` into the normalised path and the raw query. */
function splitPath(raw: string): { path: string; query: string } {
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  return { path: path === '*' ? '*' : normalizePath(path), query: q === -1 ? '' : raw.slice(q + 1) };
}

/** Builds the Request for a peeked connection. Throws peerError('bad_request') on a bad h2 path. */
export function requestFromPeek(peeked: Peeked, info: ConnectionInfo): Request {
  const { socket } = info;
  const peerIp = socket.remoteAddress ?? '';
  const source = peeked.proxy?.command === 'proxy' ? peeked.proxy.source : undefined;
  const base = {
    clientIp: source?.ip ?? peerIp,
    clientPort: source?.port ?? socket.remotePort ?? 0,
    peerIp,
    localIp: socket.localAddress ?? '',
    localPort: socket.localPort ?? 0,
    vip: peeked.proxy?.command === 'proxy' ? peeked.proxy.destination?.ip : undefined,
    trustedClient: source !== undefined,
    listener: info.listener,
  };
  switch (peeked.kind) {
    case 'http1': {
      const h = peeked.head;
      return createRequest({
        ...base,
        protocol: 'http1',
        host: h.host,
        port: h.port,
        path: h.path,
        target: h.target,
        query: h.query,
        method: h.method,
        headers: h.headers,
      });
    }
    case 'h2c': {
      const h = peeked.head;
      const { path, query } = splitPath(h.path);
      const hasHost = h.headers.some(([n]) => n === 'host');
      return createRequest({
        ...base,
        protocol: 'h2c',
        host: h.host,
        port: h.port,
        path,
        target: h.path,
        query,
        method: h.method,
        headers: hasHost || h.authority === '' ? h.headers : [...h.headers, ['host', h.authority]],
      });
    }
    case 'tls': {
      const { sni, alpn } = peeked.hello;
      return createRequest({
        ...base,
        protocol: 'tls',
        host: sni ?? '',
        sni,
        alpn,
        secure: true,
      });
    }
  }
}
