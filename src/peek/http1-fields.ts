/**
 * Strict HTTP/1 field rules shared by request and response heads (hazard rows #3–#7, #13 of
 * reference/peers-reliability.md §3). llhttp checks the basic grammar; these are the stricter
 * checks it lacks, each rejecting with a message that names the header and the byte.
 */

import { peerError } from '../base/errors.ts';
import { hex } from './http1-scan.ts';

/** One raw field line: name as sent, value with surrounding OWS removed. */
export type HeaderPair = readonly [string, string];

/** How the body after a request head is delimited (RFC 9112 §6.3). */
export type RequestBodyFraming =
  | { readonly kind: 'none' }
  | { readonly kind: 'length'; readonly length: number }
  | { readonly kind: 'chunked' };

/** Request framings plus the response-only ones: read until close, or an opaque tunnel. */
export type BodyFraming = RequestBodyFraming | { readonly kind: 'close' } | { readonly kind: 'tunnel' };

/** Shared framing singletons (they carry no per-message state). */
export const NO_BODY = Object.freeze({ kind: 'none' }) as { readonly kind: 'none' };
export const CHUNKED = Object.freeze({ kind: 'chunked' }) as { readonly kind: 'chunked' };

// RFC 9110 §5.6.2 tchar: "!#$%&'*+-.^_`|~" DIGIT ALPHA.
export const TCHAR = new Uint8Array(128);
for (const ch of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TCHAR[ch.charCodeAt(0)] = 1;
}

/** True when `s` is a non-empty RFC 9110 token. */
export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || TCHAR[c] === 0) return false;
  }
  return true;
}

function bad(who: string, what: string): Error {
  return peerError('bad_request', `${who}: ${what}`);
}

/**
 * Parses field line number `n` (1-based) that starts at byte `at` of the buffer.
 * Rejects: a line led by SP/HT (obs-fold #5, or #13 for the first one), a missing colon, an
 * empty or non-token name, whitespace before the colon (#7), and CTL/DEL in the value (#7).
 */
export function parseFieldLine(line: string, n: number, at: number, who: string): HeaderPair {
  const first = line.charCodeAt(0);
  if (first === 0x20 || first === 0x09) {
    const what = n === 1 ? 'whitespace-led line after the start line' : 'obs-fold (line folding)';
    throw bad(who, `${what} in header ${n} at byte ${at}`);
  }
  const colon = line.indexOf(':');
  if (colon === -1) throw bad(who, `no colon in header ${n} at byte ${at}`);
  if (colon === 0) throw bad(who, `empty name in header ${n} at byte ${at}`);
  for (let i = 0; i < colon; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x20 || c === 0x09) throw bad(who, `whitespace before colon in header ${n} at byte ${at + i}`);
    if (c >= 128 || TCHAR[c] === 0) throw bad(who, `invalid byte 0x${hex(c)} in name of header ${n} at byte ${at + i}`);
  }
  let from = colon + 1;
  let to = line.length;
  while (from < to && isOws(line.charCodeAt(from))) from++;
  while (to > from && isOws(line.charCodeAt(to - 1))) to--;
  for (let i = from; i < to; i++) {
    const c = line.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) {
      throw bad(who, `control byte 0x${hex(c)} in value of header ${n} at byte ${at + i}`);
    }
  }
  return [line.slice(0, colon), line.slice(from, to)];
}

function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

/** Splits a list-valued field on commas, trimming OWS; empty elements are kept (as ''). */
export function splitList(value: string): string[] {
  const parts = value.split(',');
  for (let i = 0; i < parts.length; i++) parts[i] = parts[i]!.replace(/^[ \t]+|[ \t]+$/g, '');
  return parts;
}

/** Longest Content-Length we accept: 15 digits stays below 2^53, so Number is exact (#4). */
const MAX_CL_DIGITS = 15;

/**
 * Resolves Content-Length (#4, RFC 9110 §8.6, RFC 9112 §6.3 rule 5): exactly one field line
 * whose value is 1*DIGIT of at most 15 digits. RFC 9110 §8.6 would let us accept identical
 * duplicates (`5, 5` or two `5` lines), but llhttp refuses them and so does nginx, so we refuse
 * them too and say so in our own words.
 */
export function parseContentLength(values: readonly string[], who: string): number {
  if (values.length > 1) throw bad(who, `${values.length} Content-Length lines`);
  const value = values[0] ?? '';
  if (!/^[0-9]+$/.test(value)) throw bad(who, `invalid Content-Length "${clip(value)}"`);
  if (value.length > MAX_CL_DIGITS) throw bad(who, `Content-Length longer than ${MAX_CL_DIGITS} digits`);
  return Number(value);
}

/** Codings we know; anything else before `chunked` is refused (we have no 501 code). */
const KNOWN_CODINGS = new Set(['gzip', 'x-gzip', 'deflate', 'compress', 'x-compress']);

/**
 * Validates Transfer-Encoding (#3, RFC 9112 §6.1, §6.3 rule 4): exactly one field line, a comma
 * list of bare tokens (no parameters, no empty elements), codings we know, `chunked` exactly
 * once and last. Returns normally only when the message is chunked.
 */
export function checkTransferEncoding(values: readonly string[], who: string): void {
  if (values.length > 1) throw bad(who, 'more than one Transfer-Encoding line');
  const codings = splitList(values[0] ?? '');
  for (let i = 0; i < codings.length; i++) {
    const coding = codings[i]!;
    if (!isToken(coding)) throw bad(who, `invalid Transfer-Encoding element "${clip(coding)}"`);
    const lower = coding.toLowerCase();
    const last = i === codings.length - 1;
    if (lower === 'chunked') {
      if (!last) throw bad(who, 'Transfer-Encoding chunked is not the final coding');
    } else if (last) {
      throw bad(who, `Transfer-Encoding final coding "${clip(coding)}" is not chunked`);
    } else if (!KNOWN_CODINGS.has(lower)) {
      throw bad(who, `unknown transfer coding "${clip(coding)}"`);
    }
  }
}

const CLOSE_ONLY: ReadonlySet<string> = new Set(['close']);
const KEEP_ALIVE_ONLY: ReadonlySet<string> = new Set(['keep-alive']);

/**
 * Lower-cased tokens of every Connection line. One line of just `close` or `keep-alive` (what
 * nearly every client sends) gets a shared set: no set, slice or string hash per request.
 */
export function connectionTokens(values: readonly string[]): ReadonlySet<string> {
  if (values.length === 1) {
    const only = values[0]!;
    if (only.length === 5 && only.toLowerCase() === 'close') return CLOSE_ONLY;
    if (only.length === 10 && only.toLowerCase() === 'keep-alive') return KEEP_ALIVE_ONLY;
  }
  const tokens = new Set<string>();
  // splitList's elements, without its arrays and regex (one per connection with `Connection:
  // close`): each comma-separated element without surrounding SP/HTAB, empty ones skipped.
  for (const value of values) {
    let from = 0;
    while (from <= value.length) {
      let to = value.indexOf(',', from);
      if (to === -1) to = value.length;
      let a = from;
      let b = to;
      while (a < b && isOws(value.charCodeAt(a))) a++;
      while (b > a && isOws(value.charCodeAt(b - 1))) b--;
      if (b > a) tokens.add(value.slice(a, b).toLowerCase());
      from = to + 1;
    }
  }
  return tokens;
}

/**
 * The protocol names an Upgrade field offers or announces (RFC 9110 §7.8: `protocol-name
 * ["/" protocol-version]`), lower-cased and without versions, in order; empty elements skipped.
 */
export function upgradeProtocols(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    for (const p of splitList(value)) {
      if (p === '') continue;
      const slash = p.indexOf('/');
      out.push((slash === -1 ? p : p.slice(0, slash)).toLowerCase());
    }
  }
  return out;
}

/**
 * Upgrades to HTTP/2 that a request may not ask for: `h2c` (RFC 9113 §3.1 deprecates the
 * HTTP/1.1 upgrade to cleartext HTTP/2) and `h2` (never valid in Upgrade, RFC 7540 §3.3). After
 * such an upgrade one connection would carry many requests the router never sees, so per-request
 * rules would stop applying; HAProxy and Envoy refuse it too.
 */
const REFUSED_UPGRADES = new Set(['h2c', 'h2']);

/**
 * Refuses a request whose Upgrade field offers HTTP/2 (`h2c`, `h2`), whether or not Connection
 * lists `upgrade`: a lenient backend might switch anyway. `who` prefixes the message. `h2c`:
 * an `h2c: route` listener, where the router itself switches (h2c-upgrade.ts checks the rest).
 */
export function refuseH2Upgrade(protocols: readonly string[], who: string, h2c = false): void {
  for (const p of protocols) {
    if (REFUSED_UPGRADES.has(p) && !(h2c && p === 'h2c')) {
      throw bad(
        who,
        `Upgrade: ${p} is refused (RFC 9113 §3.1: cleartext HTTP/2 starts with prior knowledge, not an upgrade)`,
      );
    }
  }
}

/** Shortens peer-supplied text quoted in an error message. */
export function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
