/**
 * Turning what the peek found into the frozen `Request` routing reads, with the connection's
 * addresses: the PROXY source becomes the client address and the PROXY destination the VIP;
 * on `clientIpFrom: header` listeners a trusted hop's forwarded header may name the client
 * instead (src/request/client-ip.ts). `peerIp` stays the socket peer, `sessionIp` the PROXY source or peer.
 */
import assert from 'node:assert';
import type { Socket } from 'node:net';
import type { ClientFrom, Request } from '../contracts/types.ts';
import type { Http1Head } from '../peek/http1.ts';
import { normalizePath, type PathNormalization } from '../peek/path.ts';
import type { Peeked } from '../peek/peek.ts';
import type { ProxyHeader } from '../proxy-protocol/index.ts';
import { type TlsFacts, tlsFactsOf } from '../tls/facts.ts';
import { type ClientAddressing, forwardedClientIp } from './client-ip.ts';
import { type ConnectionFields, createHeadRequest, createRequest } from './request.ts';

/** Connection facts that do not come from the peeked bytes. */
export interface ConnectionInfo {
  readonly listener: string;
  readonly socket: Socket;
  /** The socket's peer as the listener pipeline read it at accept; absent = read from `socket`. */
  readonly peer?: { readonly ip: string; readonly port: number } | undefined;
  /** The listener's client addressing (`clientAddressing(listenerConfig)`); absent = connection only. */
  readonly addressing?: ClientAddressing | undefined;
  /** TLS facts of a terminated connection; absent = read from the socket when it is a TLSSocket. */
  readonly tls?: TlsFacts | undefined;
  /** The listener's `pathNormalization` for h2c `:path` (HTTP/1 heads were normalised by the peek). */
  readonly paths?: PathNormalization | undefined;
}

const PLAIN = Object.freeze({});

/** Request fields a terminated TLS connection adds (secure, sni, alpn, client auth). */
function terminated(info: ConnectionInfo) {
  const facts = info.tls ?? tlsFactsOf(info.socket);
  return facts === undefined ? PLAIN : { secure: true, sni: facts.sni, alpn: facts.alpn, tls: facts.tls };
}

/** The TLS fields of `terminated` as one shape (undefined on a plain connection). */
function tlsFields(info: ConnectionInfo): {
  secure: boolean | undefined;
  sni: string | undefined;
  alpn: readonly string[] | undefined;
  tls: Request['tls'];
} {
  const t: { secure?: boolean; sni?: string; alpn?: readonly string[]; tls?: Request['tls'] } = terminated(info);
  return { secure: t.secure, sni: t.sni, alpn: t.alpn, tls: t.tls };
}

type Headers = readonly (readonly [string, string])[];

/** Every value of a lower-cased header name, in wire order (the head's pairs made only when asked). */
function valuesOf(head: { readonly headers: Headers }): (name: string) => string[] {
  return (name) => {
    const out: string[] = [];
    for (const [n, v] of head.headers) if (n.length === name.length && n.toLowerCase() === name) out.push(v);
    return out;
  };
}

/** Splits an h2 `:path` into the normalised path and the raw query. */
function splitPath(raw: string, paths: PathNormalization | undefined): { path: string; query: string } {
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  return { path: path === '*' ? '*' : normalizePath(path, paths), query: q === -1 ? '' : raw.slice(q + 1) };
}

/**
 * The Request builder of every later HTTP/1 head of one connection (per-request routing): what
 * comes from the connection (addresses, PROXY header, TLS facts) is read once here, so a head
 * costs one Request and, on `clientIpFrom: header` listeners, the forwarded-header walk.
 */
export function http1Requests(proxy: ProxyHeader | undefined, info: ConnectionInfo): (head: Http1Head) => Request {
  const { socket } = info;
  const peer = info.peer;
  const peerIp = peer === undefined ? (socket.remoteAddress ?? '') : peer.ip;
  const peerPort = peer === undefined ? (socket.remotePort ?? 0) : peer.port;
  const source = proxy?.command === 'proxy' ? proxy.source : undefined;
  const destination = proxy?.command === 'proxy' ? proxy.destination : undefined;
  const sessionIp = source?.ip ?? peerIp;
  const tls = tlsFields(info);
  const base: ConnectionFields = {
    clientIp: sessionIp,
    clientPort: source?.port ?? peerPort,
    peerIp,
    sessionIp,
    local: socket,
    vip: destination?.ip,
    vipPort: destination?.port,
    trustedClient: source !== undefined,
    clientFrom: source === undefined ? 'connection' : 'proxy',
    listener: info.listener,
    secure: tls.secure,
    sni: tls.sni,
    alpn: tls.alpn,
    tls: tls.tls,
  };
  const addressing = info.addressing;
  // A head's Request is made from `base` and the head itself: no init object per head.
  return (h) => {
    const forwarded =
      addressing?.header === undefined ? undefined : forwardedClientIp(addressing, sessionIp, valuesOf(h));
    return createHeadRequest(base, h, forwarded);
  };
}

/** What a Request is built from: every peek but the bare h2c preface (`h2c: route` hands that on). */
export type RoutablePeek = Exclude<Peeked, { readonly kind: 'h2c-preface' }>;

/** Builds the Request for a peeked connection. Throws peerError('bad_request') on a bad h2 path. */
export function requestFromPeek(peeked: Peeked, info: ConnectionInfo): Request {
  // A bare preface carries no request: `h2c: route` hands the connection on before this.
  assert(peeked.kind !== 'h2c-preface', 'requestFromPeek: an h2c preface has no request');
  const { socket } = info;
  const peer = info.peer;
  const peerIp = peer === undefined ? (socket.remoteAddress ?? '') : peer.ip;
  const peerPort = peer === undefined ? (socket.remotePort ?? 0) : peer.port;
  const source = peeked.proxy?.command === 'proxy' ? peeked.proxy.source : undefined;
  const destination = peeked.proxy?.command === 'proxy' ? peeked.proxy.destination : undefined;
  const sessionIp = source?.ip ?? peerIp;
  const forwarded =
    info.addressing === undefined || peeked.kind === 'tls'
      ? undefined
      : forwardedClientIp(info.addressing, sessionIp, valuesOf(peeked.head));
  const clientFrom: ClientFrom = forwarded !== undefined ? 'header' : source !== undefined ? 'proxy' : 'connection';
  const base = {
    clientIp: forwarded ?? sessionIp,
    clientPort: forwarded !== undefined ? 0 : (source?.port ?? peerPort),
    peerIp,
    sessionIp,
    local: socket,
    vip: destination?.ip,
    vipPort: destination?.port,
    trustedClient: forwarded !== undefined || source !== undefined,
    clientFrom,
    listener: info.listener,
    ...terminated(info),
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
        headersOf: h,
      });
    }
    case 'h2c': {
      const h = peeked.head;
      const { path, query } = splitPath(h.path, info.paths);
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
