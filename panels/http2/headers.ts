/**
 * Header translation between the two sides of a stream. Only what HTTP/2 requires changes
 * (RFC 9113 §8.2.2, §8.3.1): connection-specific fields are dropped, `te` is kept only as
 * `trailers`, the authority moves between `:authority` and `Host`, and HTTP/1 gets cookies
 * joined into one field (§8.2.3). Names are lower-cased (HTTP/2 requires it; HTTP/1 ignores
 * case). Everything else passes in order, duplicates kept as arrays.
 */
import type { OutgoingHttpHeaders } from 'node:http';

/**
 * Fields that describe one hop, never forwarded across HTTP/2 (RFC 9113 §8.2.2; `http2-settings`
 * belongs to the h2c upgrade, RFC 7540 §3.2.1). Node refuses to send any of them on an HTTP/2
 * stream (it throws), so a client's copy must never reach `session.request`.
 */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/** Raw `[name, value, name, value…]` pairs (node's rawHeaders) into an object, keeping duplicates. */
export function fromRaw(raw: readonly string[], keep: (name: string, value: string) => boolean): OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = Object.create(null);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    if (!keep(name, value)) continue;
    const had = out[name];
    if (had === undefined) out[name] = value;
    else if (Array.isArray(had)) had.push(value);
    else out[name] = [had, value];
  }
  return out;
}

/** True for a field that may cross to the other side (not a pseudo-header, not hop-by-hop). */
export function forwardable(name: string, value: string): boolean {
  if (name.charCodeAt(0) === 0x3a) return false;
  if (CONNECTION_SPECIFIC.has(name)) return false;
  return name !== 'te' || value.trim().toLowerCase() === 'trailers';
}

/** What the router knows about the request head it forwards. */
export interface Head {
  readonly method: string;
  /** The request-target as the client sent it (`:path`, or the HTTP/1 target). */
  readonly target: string;
  readonly authority: string;
  readonly scheme: string;
  /** The client's fields in wire order (node rawHeaders). */
  readonly raw: readonly string[];
}

/**
 * Request fields for an HTTP/2 upstream: pseudo-headers first, `host` folded into `:authority`.
 * `te` goes as the one value HTTP/2 allows, `trailers` (however the client spelled it, once):
 * node throws on any other spelling. Repeated single-value fields (two `user-agent`) pass as
 * sent; the session is opened with `strictSingleValueFields: false` (upstream-h2.ts).
 */
export function h2RequestHeaders(head: Head): string[] {
  // node's raw-array form: one array in wire order, no header object to build and copy.
  const out = [':method', head.method, ':path', head.target, ':scheme', head.scheme, ':authority', head.authority];
  const raw = head.raw;
  let te = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    if (name === 'host' || !forwardable(name, value)) continue;
    if (name === 'te') {
      if (te) continue;
      te = true;
      out.push(name, 'trailers');
    } else out.push(name, value);
  }
  return out;
}

/** Request fields for an HTTP/1.1 upstream: `Host` from the authority, cookies joined with `; `. */
export function h1RequestHeaders(head: Head): OutgoingHttpHeaders {
  const fields = fromRaw(head.raw, forwardable);
  const cookie = fields.cookie;
  if (Array.isArray(cookie)) fields.cookie = cookie.join('; ');
  if (fields.host === undefined && head.authority !== '') fields.host = head.authority;
  return fields;
}

/**
 * Response fields for the client as node's raw array (`[name, value, …]`, wire order, names
 * lower-cased): pseudo-headers and hop-by-hop fields of an HTTP/1 backend dropped.
 */
export function responseHeaders(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    if (forwardable(name, value)) out.push(name, value);
  }
  return out;
}

/** Trailer fields (either direction): pseudo-headers and hop-by-hop fields are not allowed there. */
export function trailerFields(raw: readonly string[]): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!forwardable(name, raw[i + 1]!)) continue;
    out[name] = out[name] === undefined ? raw[i + 1]! : `${out[name]}, ${raw[i + 1]!}`;
  }
  return out;
}
