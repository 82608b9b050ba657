/**
 * Path normalisation for routing (DESIGN "What a request looks like to routing").
 *
 * The normalised path is used for matching only; the forwarded bytes stay as sent. Steps:
 *   1. Walk the path once; a `%XX` escape of an unreserved character (RFC 3986 §2.3: ALPHA DIGIT
 *      - . _ ~) is decoded, every other escape is kept exactly as written (case included),
 *      `%00` is rejected, and a malformed escape (`%zz`, `%4`) is rejected (RFC 3986 §2.1).
 *   2. Remove dot-segments (RFC 3986 §5.2.4) on the decoded form, so `%2E%2E` counts as `..`.
 *      Where §5.2.4 would silently clamp `..` at the root, we reject instead: a path that climbs
 *      above `/` means a client is probing, and a backend might resolve it differently.
 */

import { peerError } from '../errors.ts';

/** Value of one hex digit (char code), or -1. */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** True for RFC 3986 §2.3 unreserved characters. */
function isUnreserved(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x5f ||
    c === 0x7e
  );
}

/** Step 1: decode unreserved escapes, keep the rest; reject %00 and malformed escapes. */
function decodeUnreserved(raw: string): string {
  if (raw.indexOf('%') === -1) return raw;
  let out = '';
  let from = 0;
  for (let i = raw.indexOf('%'); i !== -1; i = raw.indexOf('%', i)) {
    const hi = hexValue(raw.charCodeAt(i + 1));
    const lo = hexValue(raw.charCodeAt(i + 2));
    if (hi < 0 || lo < 0) throw peerError('bad_request', `path: malformed percent-escape at offset ${i}`);
    const code = hi * 16 + lo;
    if (code === 0) throw peerError('bad_request', `path: encoded NUL at offset ${i}`);
    if (isUnreserved(code)) {
      out += raw.slice(from, i) + String.fromCharCode(code);
      from = i + 3;
    }
    i += 3;
  }
  return from === 0 ? raw : out + raw.slice(from);
}

/** Step 2: RFC 3986 §5.2.4 on an absolute path, rejecting a climb above the root. */
function removeDotSegments(path: string): string {
  // Fast path: no segment can be "." or ".." when no "/." occurs.
  if (path.indexOf('/.') === -1) return path;
  const segments = path.split('/');
  const out: string[] = [];
  const last = segments.length - 1;
  // segments[0] is the empty string before the leading "/".
  for (let i = 1; i <= last; i++) {
    const seg = segments[i]!;
    if (seg === '.') {
      if (i === last) out.push('');
    } else if (seg === '..') {
      if (out.length === 0) throw peerError('bad_request', 'path: dot-segments climb above the root');
      out.pop();
      if (i === last) out.push('');
    } else {
      out.push(seg);
    }
  }
  return `/${out.join('/')}`;
}

/**
 * Normalises an origin-form path for matching: decodes unreserved escapes, removes dot-segments;
 * throws `peerError('bad_request')` on `%00`, a malformed escape, or a climb above `/`.
 */
export function normalizePath(rawPath: string): string {
  if (rawPath.charCodeAt(0) !== 0x2f) {
    throw peerError('bad_request', 'path: does not start with "/"');
  }
  return removeDotSegments(decodeUnreserved(rawPath));
}
