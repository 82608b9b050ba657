/**
 * The frozen Request view that routing reads (src/contracts/types.ts `Request`), built by every peeker
 * (HTTP/1, h2c, TLS passthrough) from plain fields.
 *
 * Lookups are lazy: the lower-cased header index, the cookie map and the query map are each
 * built on first use, because most requests are routed on host and path alone. The object is
 * frozen; the lazy caches live in #private fields, which freezing does not cover.
 */

import type { ClientFrom, Protocol, Request, TlsInfo } from '../contracts/types.ts';

/** The plain fields a peeker knows; optional ones default to absent / empty. */
export interface RequestInit {
  readonly protocol: Protocol;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly path?: string | undefined;
  readonly target?: string | undefined;
  readonly query?: string | undefined;
  readonly method?: string | undefined;
  /** Raw [name, value] pairs in wire order, names as sent. */
  readonly headers?: readonly (readonly [string, string])[] | undefined;
  /**
   * Or where to find them on first lookup (an HTTP/1 head splits its field lines into pairs
   * only when asked, src/peek/http1-head.ts): most requests are routed without a header lookup.
   */
  readonly headersOf?: { readonly headers: readonly (readonly [string, string])[] } | undefined;
  readonly sni?: string | undefined;
  readonly alpn?: readonly string[] | undefined;
  readonly clientIp: string;
  readonly clientPort: number;
  readonly peerIp?: string | undefined;
  /** Defaults to clientIp. */
  readonly sessionIp?: string | undefined;
  /** The listener's address; or give `local` and they are read from it on first use. */
  readonly localIp?: string | undefined;
  readonly localPort?: number | undefined;
  /**
   * The accepted socket, read for `localIp`/`localPort` only when something asks (the PROXY
   * header out, an operator): most connections never need their own local address, and
   * reading it costs a getsockname.
   */
  readonly local?: LocalEnd | undefined;
  readonly vip?: string | undefined;
  readonly vipPort?: number | undefined;
  readonly secure?: boolean | undefined;
  readonly trustedClient?: boolean | undefined;
  /** Where `clientIp` came from (connection, a PROXY header, a forwarded header); default `connection`. */
  readonly clientFrom?: ClientFrom | undefined;
  readonly tls?: TlsInfo | undefined;
  readonly listener: string;
}

/** Where a lazy local address comes from (a net.Socket is one). */
export interface LocalEnd {
  readonly localAddress?: string | undefined;
  readonly localPort?: number | undefined;
}

const NONE: readonly string[] = Object.freeze([]);
const NO_HEADERS: readonly (readonly [string, string])[] = Object.freeze([]);

/** Decodes `%XX` (and `+` as space, as HTML forms and BFE's query conditions do); never throws. */
export function decodeQueryComponent(s: string): string {
  if (s.indexOf('%') === -1 && s.indexOf('+') === -1) return s;
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      const hex = s.slice(i + 1, i + 3);
      if (hex.length === 2 && /^[0-9a-fA-F]{2}$/.test(hex)) {
        bytes.push(Number.parseInt(hex, 16));
        i += 2;
        continue;
      }
    }
    if (c === 0x2b) {
      bytes.push(0x20);
    } else if (c < 0x80) {
      bytes.push(c);
    } else {
      // Non-ASCII characters are kept by re-encoding them as UTF-8.
      for (const b of Buffer.from(s[i]!, 'utf8')) bytes.push(b);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Parses `a=1&b=2` into a map of the first value per decoded name. */
function parseQuery(query: string): Map<string, string> {
  const map = new Map<string, string>();
  if (query === '') return map;
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decodeQueryComponent(eq === -1 ? part : part.slice(0, eq));
    if (map.has(name)) continue;
    map.set(name, eq === -1 ? '' : decodeQueryComponent(part.slice(eq + 1)));
  }
  return map;
}

/** Parses every Cookie header value (`a=1; b=2`) into a map of the first value per name. */
function parseCookies(values: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const value of values) {
    for (const pair of value.split(';')) {
      const eq = pair.indexOf('=');
      if (eq === -1) continue;
      const name = pair.slice(0, eq).trim();
      if (name === '' || map.has(name)) continue;
      let v = pair.slice(eq + 1).trim();
      // RFC 6265 §4.1.1 allows a DQUOTE-wrapped value; the quotes are not part of it.
      if (v.length >= 2 && v.charCodeAt(0) === 0x22 && v.charCodeAt(v.length - 1) === 0x22) v = v.slice(1, -1);
      map.set(name, v);
    }
  }
  return map;
}

class FrozenRequest implements Request {
  declare readonly protocol: Protocol;
  declare readonly host: string;
  declare readonly port: number | undefined;
  declare readonly path: string | undefined;
  declare readonly target: string | undefined;
  declare readonly query: string;
  declare readonly method: string | undefined;
  declare readonly sni: string | undefined;
  declare readonly alpn: readonly string[];
  declare readonly clientIp: string;
  declare readonly clientPort: number;
  declare readonly peerIp: string;
  declare readonly sessionIp: string;
  #localIp: string | undefined;
  #localPort: number | undefined;
  #local: LocalEnd | undefined;
  declare readonly vip: string | undefined;
  declare readonly vipPort: number | undefined;
  declare readonly secure: boolean;
  declare readonly trustedClient: boolean;
  declare readonly clientFrom: ClientFrom;
  declare readonly tls: TlsInfo | undefined;
  declare readonly listener: string;
  #headers: readonly (readonly [string, string])[] | undefined;
  #headersOf: { readonly headers: readonly (readonly [string, string])[] } | undefined;
  #index: Map<string, string[]> | undefined;
  #cookies: Map<string, string> | undefined;
  #params: Map<string, string> | undefined;

  /**
   * From `init`; or, when `init` is undefined, from a connection's fields and one of its
   * HTTP/1 heads (`createHeadRequest`). Both paths write the same fields in the same order, so
   * every Request has one shape.
   */
  constructor(init: RequestInit | undefined, conn?: ConnectionFields, head?: HeadFields, forwarded?: string) {
    if (init === undefined) {
      const c = conn!;
      const h = head!;
      const clientIp = forwarded ?? c.clientIp;
      this.protocol = 'http1';
      this.host = h.host;
      this.port = h.port;
      this.path = h.path;
      this.target = h.target;
      this.query = h.query;
      this.method = h.method;
      this.sni = c.sni;
      this.alpn = c.alpn ?? NONE;
      this.clientIp = clientIp;
      this.clientPort = forwarded === undefined ? c.clientPort : 0;
      this.peerIp = c.peerIp;
      this.sessionIp = c.sessionIp;
      this.#localIp = undefined;
      this.#localPort = undefined;
      this.#local = c.local;
      this.vip = c.vip;
      this.vipPort = c.vipPort;
      this.secure = c.secure ?? false;
      this.trustedClient = forwarded !== undefined || c.trustedClient;
      this.clientFrom = forwarded === undefined ? (c.clientFrom ?? 'connection') : 'header';
      this.tls = c.tls;
      this.listener = c.listener;
      this.#headers = undefined;
      this.#headersOf = h;
      return;
    }
    this.protocol = init.protocol;
    this.host = init.host ?? '';
    this.port = init.port;
    this.path = init.path;
    this.target = init.target;
    this.query = init.query ?? '';
    this.method = init.method;
    this.sni = init.sni;
    this.alpn = init.alpn ?? NONE;
    this.clientIp = init.clientIp;
    this.clientPort = init.clientPort;
    this.peerIp = init.peerIp ?? init.clientIp;
    this.sessionIp = init.sessionIp ?? init.clientIp;
    this.#localIp = init.localIp;
    this.#localPort = init.localPort;
    this.#local = init.local;
    this.vip = init.vip;
    this.vipPort = init.vipPort;
    this.secure = init.secure ?? false;
    this.trustedClient = init.trustedClient ?? false;
    this.clientFrom = init.clientFrom ?? 'connection';
    this.tls = init.tls;
    this.listener = init.listener;
    this.#headers = init.headers;
    this.#headersOf = init.headersOf;
  }

  get localIp(): string {
    if (this.#localIp === undefined) this.#readLocal();
    return this.#localIp as string;
  }

  get localPort(): number {
    if (this.#localPort === undefined) this.#readLocal();
    return this.#localPort as number;
  }

  #readLocal(): void {
    const local = this.#local;
    this.#localIp ??= local?.localAddress ?? '';
    this.#localPort ??= local?.localPort ?? 0;
    this.#local = undefined;
  }

  /** The lower-cased name → values index, built on first lookup. */
  #headerIndex(): Map<string, string[]> {
    if (this.#index !== undefined) return this.#index;
    const index = new Map<string, string[]>();
    const headers = this.#headers ?? this.#headersOf?.headers ?? NO_HEADERS;
    this.#headersOf = undefined;
    for (const [name, value] of headers) {
      const key = name.toLowerCase();
      const list = index.get(key);
      if (list === undefined) index.set(key, [value]);
      else list.push(value);
    }
    this.#index = index;
    return index;
  }

  header(name: string): string | undefined {
    return this.#headerIndex().get(name.toLowerCase())?.[0];
  }

  headerValues(name: string): readonly string[] {
    return this.#headerIndex().get(name.toLowerCase()) ?? NONE;
  }

  cookie(name: string): string | undefined {
    this.#cookies ??= parseCookies(this.headerValues('cookie'));
    return this.#cookies.get(name);
  }

  queryParam(name: string): string | undefined {
    this.#params ??= parseQuery(this.query);
    return this.#params.get(name);
  }
}

/** Builds the frozen Request view from a peeker's plain fields. */
export function createRequest(init: RequestInit): Request {
  return Object.freeze(new FrozenRequest(init));
}

/** What every HTTP/1 head of one connection shares in its Request (from-peek.ts http1Requests). */
export interface ConnectionFields {
  readonly clientIp: string;
  readonly clientPort: number;
  readonly peerIp: string;
  readonly sessionIp: string;
  readonly local: LocalEnd | undefined;
  readonly vip: string | undefined;
  readonly vipPort: number | undefined;
  readonly trustedClient: boolean;
  /**
   * `proxy` when a trusted PROXY header gave the address, else `connection` (the default); a
   * head's forwarded header makes its request's `header`.
   */
  readonly clientFrom?: 'connection' | 'proxy' | undefined;
  readonly listener: string;
  readonly secure: boolean | undefined;
  readonly sni: string | undefined;
  readonly alpn: readonly string[] | undefined;
  readonly tls: TlsInfo | undefined;
}

/** What one HTTP/1 head adds (an Http1Head is one); its field pairs are read only when asked. */
export interface HeadFields {
  readonly host: string;
  readonly port: number | undefined;
  readonly path: string | undefined;
  readonly target: string;
  readonly query: string;
  readonly method: string;
  readonly headers: readonly (readonly [string, string])[];
}

/**
 * The Request of an HTTP/1 head on a connection with the fields `conn`: what `createRequest`
 * makes of `{ ...conn, protocol: 'http1', <head's fields>, headersOf: head }` (with `forwarded`,
 * a client named by a trusted forwarded header: that IP, port 0, trusted), without that init
 * object per head (issue 18: per-request routing builds one Request per head).
 */
export function createHeadRequest(conn: ConnectionFields, head: HeadFields, forwarded: string | undefined): Request {
  return Object.freeze(new FrozenRequest(undefined, conn, head, forwarded));
}
