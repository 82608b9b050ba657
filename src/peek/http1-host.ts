/**
 * Host / authority validation and normalisation (hazard #9, RFC 9112 §3.2, RFC 3986 §3.2.2).
 *
 * Accepted: `reg-name [":" port]` and `"[" IPv6 "]" [":" port]`. We are stricter than RFC 3986
 * where a laxer reading lets a backend see a different host: no userinfo (`user@a`), no
 * percent-escapes and no comma in a reg-name, no IPvFuture, port 1–5 digits ≤ 65535 and not empty.
 * Normalised: lower-cased, one trailing dot removed, IPv6 keeps its brackets.
 */

import { isIPv6 } from 'node:net';
import { peerError } from '../base/errors.ts';
import { clip } from './http1-fields.ts';

/** A normalised host and its port, when one was given. */
export interface Authority {
  readonly host: string;
  readonly port: number | undefined;
}

// RFC 3986 unreserved + sub-delims, minus ',' (some backends split Host on it).
const REG_NAME = /^[A-Za-z0-9\-._~!$&'()*+;=]*$/;
const PORT = /^[0-9]{1,5}$/;

/** Parses a Host value or an authority; `what` names it in errors (`Host`, `target authority`). */
export function parseAuthority(raw: string, what: string): Authority {
  let hostPart: string;
  let portPart: string | undefined;
  if (raw.charCodeAt(0) === 0x5b) {
    const close = raw.indexOf(']');
    if (close === -1) throw bad(what, raw, 'unterminated IPv6 literal');
    hostPart = raw.slice(0, close + 1);
    if (!isIPv6(raw.slice(1, close))) throw bad(what, raw, 'invalid IPv6 literal');
    const rest = raw.slice(close + 1);
    if (rest !== '') {
      if (rest.charCodeAt(0) !== 0x3a) throw bad(what, raw, 'junk after IPv6 literal');
      portPart = rest.slice(1);
    }
  } else {
    const colon = raw.indexOf(':');
    hostPart = colon === -1 ? raw : raw.slice(0, colon);
    if (colon !== -1) portPart = raw.slice(colon + 1);
    if (raw.indexOf('@') !== -1) throw bad(what, raw, 'userinfo is not allowed');
    if (!REG_NAME.test(hostPart)) throw bad(what, raw, 'invalid character in host');
  }
  let port: number | undefined;
  if (portPart !== undefined) {
    if (!PORT.test(portPart)) throw bad(what, raw, 'invalid port');
    port = Number(portPart);
    if (port > 65535) throw bad(what, raw, 'port out of range');
  }
  let host = hostPart.toLowerCase();
  if (host.endsWith('.')) host = host.slice(0, -1);
  return { host, port };
}

function bad(what: string, raw: string, why: string): Error {
  return peerError('bad_request', `http1: ${what} "${clip(raw)}": ${why}`);
}

const DEFAULT_PORT: Readonly<Record<string, number>> = { http: 80, https: 443 };

/**
 * True when an absolute-form authority names the same origin as the Host header (#8). Host
 * comparison is on the normalised form; a port equal to the scheme's default counts as absent.
 */
export function sameAuthority(a: Authority, b: Authority, scheme: string): boolean {
  if (a.host !== b.host) return false;
  const def = DEFAULT_PORT[scheme];
  return (a.port ?? def) === (b.port ?? def);
}
