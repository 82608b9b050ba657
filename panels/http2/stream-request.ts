/**
 * The routing `Request` of one stream (or one HTTP/1.1 request on the fallback path), built
 * with the same rules as the peekers (DESIGN "What a request looks like to routing"):
 * host from `:authority` (else `Host`) lower-cased without port or trailing dot, path
 * normalised for matching, and the head kept as sent for forwarding. The connection facts come
 * from the listener pipeline's Connection (src/listener/): the PROXY source is the client
 * address and its destination the VIP, `clientIpFrom: header` is honoured for trusted hops,
 * and a terminated connection's TLS facts (sni, alpn, client certificate) are the socket's.
 * A header list over `limits.maxHeaderBytes`, or with more fields than `limits.maxHeaderCount`
 * (pseudo-headers not counted; HTTP/1.1 heads too), is refused (431) before anything is routed, and an
 * HTTP/1.1 request offering `Upgrade: h2c` (or `h2`) is refused (400), as on the net panel.
 */

import { peerError } from '../../src/base/errors.ts';
import type { ListenerConfig } from '../../src/config/schema.ts';
import type { Request } from '../../src/contracts/types.ts';
import { splitAuthority as splitUncached } from '../../src/peek/h2-fields.ts';
import { DEFAULT_MAX_HEADER_COUNT } from '../../src/peek/http1.ts';
import { refuseH2Upgrade, upgradeProtocols } from '../../src/peek/http1-fields.ts';
import { normalizePath } from '../../src/peek/path.ts';
import { clientAddressing, forwardedClientIp } from '../../src/request/client-ip.ts';
import { createRequest } from '../../src/request/request.ts';
import { tlsFactsOf } from '../../src/tls/facts.ts';
import type { Down } from './down.ts';
import type { Head } from './headers.ts';

/** The routing view and the head to forward. */
export interface Routed {
  readonly request: Request;
  readonly head: Head;
}

/** How many distinct authorities `splitAuthority` remembers (cleared whole when full). */
const AUTHORITY_CACHE_SIZE = 512;
const authorities = new Map<string, { readonly host: string; readonly port: number | undefined }>();

/**
 * `splitAuthority` of src/peek, remembered per authority string: every stream of a connection
 * usually names the same one, and the split is a regular expression plus a lower-casing. Only
 * valid authorities are kept (a malformed one throws each time, as before).
 */
function splitAuthority(authority: string): { readonly host: string; readonly port: number | undefined } {
  let split = authorities.get(authority);
  if (split === undefined) {
    split = splitUncached(authority);
    if (authorities.size >= AUTHORITY_CACHE_SIZE) authorities.clear();
    authorities.set(authority, split);
  }
  return split;
}

/** Per field line, RFC 9113 §6.5.2 counts name + value + 32 octets. */
const FIELD_OVERHEAD = 32;

/** Every value of a lower-cased header name among node's rawHeaders, in wire order. */
function valuesOf(raw: readonly string[]): (name: string) => string[] {
  return (name) => {
    const out: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const n = raw[i]!;
      if (n.length === name.length && n.toLowerCase() === name) out.push(raw[i + 1]!);
    }
    return out;
  };
}

/** What one pass over a head's fields finds. */
interface Fields {
  /** The header list size as SETTINGS_MAX_HEADER_LIST_SIZE counts it (pseudo-headers included). */
  readonly size: number;
  /** The `[name, value]` pairs without pseudo-headers, for Request.header(). */
  readonly pairs: Array<readonly [string, string]>;
  /** The first Host field's value, and how many there are. */
  readonly host: string | undefined;
  readonly hosts: number;
}

/** One pass over node's rawHeaders: size, pairs and Host fields. */
function fieldsOf(raw: readonly string[]): Fields {
  let size = 0;
  let host: string | undefined;
  let hosts = 0;
  const pairs: Array<readonly [string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    size += name.length + value.length + FIELD_OVERHEAD;
    if (name.charCodeAt(0) === 0x3a) continue;
    pairs.push([name, value]);
    if (name.length === 4 && name.toLowerCase() === 'host' && hosts++ === 0) host = value;
  }
  return { size, pairs, host, hosts };
}

/** The authority: `:authority`, else the one Host header (two Host fields are ambiguous: 400). */
function authorityOf(down: Down, fields: Fields): string {
  if (fields.hosts > 1) throw peerError('bad_request', 'request: two host fields');
  const { host } = fields;
  const pseudo = down.authority;
  const authority = pseudo ?? host;
  if (authority === undefined || authority === '') throw peerError('bad_request', 'request: no authority and no host');
  if (pseudo !== undefined && host !== undefined) {
    const a = splitAuthority(pseudo);
    const b = splitAuthority(host);
    if (a.host !== b.host || a.port !== b.port) throw peerError('bad_request', 'request: :authority and host disagree');
  }
  return authority;
}

/** Builds the Request and forwarding head; throws a SwitchboardError on a malformed head (400). */
export function routeView(down: Down, listener: ListenerConfig): Routed {
  const h2 = down.h2;
  const raw = down.rawHeaders;
  const conn = down.conn;
  const fields = fieldsOf(raw);
  // HTTP/1.1 heads are bounded by the fallback server's maxHeaderSize; h2 lists are checked here.
  if (h2 && conn !== undefined && fields.size > conn.engine.limits.maxHeaderBytes) {
    throw peerError('header_too_large', `request: header list over ${conn.engine.limits.maxHeaderBytes} bytes`);
  }
  // Node's own limits (maxHeadersCount 2,000 on HTTP/1.1, maxHeaderListPairs on h2) are looser.
  const maxFields = conn?.engine.limits.maxHeaderCount ?? DEFAULT_MAX_HEADER_COUNT;
  if (fields.pairs.length > maxFields) {
    throw peerError('header_too_large', `request: more than ${maxFields} header fields`);
  }
  // The HTTP/1.1 fallback refuses `Upgrade: h2c` as the net panel does (400). Node's server would
  // pass it on as a plain request (no 'upgrade' listener) and the panel drops Upgrade upstream,
  // so nothing could switch; the refusal keeps one answer for one request on every panel.
  if (!h2) refuseH2Upgrade(upgradeProtocols(valuesOf(raw)('upgrade')), 'request');
  const method = down.method;
  if (method === 'CONNECT') throw peerError('method_not_allowed', 'request: connect is not proxied by the http2 panel');
  const target = down.target;
  if (target === '') throw peerError('bad_request', 'request: empty path');
  const authority = authorityOf(down, fields);
  const { host, port } = splitAuthority(authority);
  const q = target.indexOf('?');
  const rawPath = q === -1 ? target : target.slice(0, q);
  if (rawPath !== '*' && !rawPath.startsWith('/')) throw peerError('bad_request', 'request: path is not origin-form');
  const path = rawPath === '*' ? '*' : normalizePath(rawPath, listener.pathNormalization);
  const socket = conn?.socket ?? down.socket;
  const facts = socket === undefined ? undefined : tlsFactsOf(socket);
  const secure = facts !== undefined;
  const scheme = h2 ? (down.scheme ?? (secure ? 'https' : 'http')) : secure ? 'https' : 'http';
  const headers = fields.pairs;
  if (fields.hosts === 0) headers.push(['host', authority]);
  const proxy = conn?.proxy?.command === 'proxy' ? conn.proxy : undefined;
  const peerIp = conn?.ip ?? socket?.remoteAddress ?? '';
  const sessionIp = proxy?.source?.ip ?? peerIp;
  const addressing = clientAddressing(listener);
  const forwarded =
    addressing.header === undefined ? undefined : forwardedClientIp(addressing, sessionIp, valuesOf(raw));
  const request = createRequest({
    protocol: h2 ? (secure ? 'h2' : 'h2c') : 'http1',
    host,
    port,
    path,
    target,
    query: q === -1 ? '' : target.slice(q + 1),
    method,
    headers,
    sni: facts?.sni,
    alpn: facts?.alpn,
    clientIp: forwarded ?? sessionIp,
    clientPort: forwarded !== undefined ? 0 : (proxy?.source?.port ?? conn?.port ?? socket?.remotePort ?? 0),
    peerIp,
    sessionIp,
    // Read on first use (an operator, the PROXY header out): most streams never need it.
    local: socket,
    vip: proxy?.destination?.ip,
    vipPort: proxy?.destination?.port,
    trustedClient: forwarded !== undefined || proxy?.source !== undefined,
    clientFrom: forwarded !== undefined ? 'header' : proxy?.source !== undefined ? 'proxy' : 'connection',
    secure,
    tls: facts?.tls,
    listener: listener.name,
  });
  return { request, head: { method, target, authority, scheme, raw } };
}
