/**
 * Path normalisation for routing (DESIGN "What a request looks like to routing").
 *
 * Routing must match on the path the backend will act on, or a rule like `/admin/*` →
 * blackhole is bypassed by `//admin/x` or `/admin%2Fx`, which nginx serves as `/admin/x`.
 * The normalised path is used for matching only; the forwarded bytes stay as sent. Steps:
 *   1. Walk the path once (RFC 3986 §2.1): a `%XX` escape of an unreserved character (§2.3:
 *      ALPHA DIGIT - . _ ~) is decoded; `%2F` (`/`) and `%5C` (`\`) follow the listener's
 *      `escapedSlashes` (below); every other escape is kept exactly as written (case included).
 *      `%00` and a malformed escape (`%zz`, `%4`) are rejected, and so is a raw `\` (not a
 *      pchar, and some backends read it as `/`).
 *   2. With `mergeSlashes`, runs of `/` become one (nginx `merge_slashes on`, its default;
 *      Envoy `merge_slashes`; HAProxy `normalize-uri path-merge-slashes`).
 *   3. Remove dot-segments (RFC 3986 §5.2.4) on the result, so `%2E%2E` counts as `..` and, when
 *      `%2F` is decoded, `/a%2F..%2Fb` is `/b`, as nginx resolves it. Where §5.2.4 would silently
 *      clamp `..` at the root, we reject instead: a path that climbs above `/` means a client is
 *      probing, and a backend might resolve it differently.
 *
 * `escapedSlashes` (Envoy's `path_with_escaped_slashes_action`, which also covers `%5C`):
 *   decode (default)  `%2F`/`%2f` counts as `/` (nginx decodes it and acts on the result);
 *                     `%5C` is refused, since backends disagree on backslash (IIS and URL-spec
 *                     parsers read `/`, nginx on Unix a plain character): no answer is safe.
 *   reject            `%2F` and `%5C` are refused (400), as Envoy REJECT_REQUEST, Tomcat and
 *                     Apache's `AllowEncodedSlashes Off` do.
 *   keep              both stay literal escapes inside a segment (Envoy KEEP_UNCHANGED), for
 *                     backends that keep `%2F` as data (GitLab-style `group%2Fproject` ids served
 *                     by a backend that does not decode them).
 */

import { peerError } from '../base/errors.ts';

/** A listener's `pathNormalization` (src/config/schema.ts). */
export interface PathNormalization {
  readonly mergeSlashes: boolean;
  readonly escapedSlashes: 'decode' | 'reject' | 'keep';
}

/** The default: what nginx, the most common backend, acts on. */
export const DEFAULT_PATH_NORMALIZATION: PathNormalization = Object.freeze({
  mergeSlashes: true,
  escapedSlashes: 'decode',
});

const SLASH = 0x2f;
const BACKSLASH = 0x5c;

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

/** What to do with one escape: the decoded character, or undefined to keep the escape. */
function decodeEscape(code: number, at: number, mode: PathNormalization['escapedSlashes']): string | undefined {
  if (code === 0) throw peerError('bad_request', `path: encoded NUL at offset ${at}`);
  if (isUnreserved(code)) return String.fromCharCode(code);
  if (code === SLASH) {
    if (mode === 'reject') throw peerError('bad_request', `path: encoded "/" (%2F) at offset ${at}`);
    return mode === 'decode' ? '/' : undefined;
  }
  if (code === BACKSLASH && mode !== 'keep') {
    throw peerError('bad_request', `path: encoded "\\" (%5C) at offset ${at}`);
  }
  return undefined;
}

/** Step 1: decode unreserved escapes (and %2F per mode), keep the rest; reject the bad ones. */
function decodeEscapes(raw: string, mode: PathNormalization['escapedSlashes']): string {
  const backslash = raw.indexOf('\\');
  if (backslash !== -1) throw peerError('bad_request', `path: "\\" at offset ${backslash}`);
  if (raw.indexOf('%') === -1) return raw;
  let out = '';
  let from = 0;
  for (let i = raw.indexOf('%'); i !== -1; i = raw.indexOf('%', i)) {
    const hi = hexValue(raw.charCodeAt(i + 1));
    const lo = hexValue(raw.charCodeAt(i + 2));
    if (hi < 0 || lo < 0) throw peerError('bad_request', `path: malformed percent-escape at offset ${i}`);
    const decoded = decodeEscape(hi * 16 + lo, i, mode);
    if (decoded !== undefined) {
      out += raw.slice(from, i) + decoded;
      from = i + 3;
    }
    i += 3;
  }
  return from === 0 ? raw : out + raw.slice(from);
}

/** Step 2: runs of "/" become one. */
function mergeSlashes(path: string): string {
  if (path.indexOf('//') === -1) return path;
  let out = '';
  let from = 0;
  for (let i = path.indexOf('//'); i !== -1; i = path.indexOf('//', from)) {
    out += path.slice(from, i + 1);
    from = i + 1;
    while (path.charCodeAt(from) === SLASH) from++;
  }
  return out + path.slice(from);
}

/** Step 3: RFC 3986 §5.2.4 on an absolute path, rejecting a climb above the root. */
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
 * Normalises an origin-form path for matching: decodes unreserved escapes (and `%2F` with
 * `escapedSlashes: decode`), merges slashes (with `mergeSlashes`), removes dot-segments; throws
 * `peerError('bad_request')` on `%00`, a malformed escape, a `\`, `%5C` (unless `keep`), `%2F`
 * with `reject`, or a climb above `/`.
 */
export function normalizePath(rawPath: string, options: PathNormalization = DEFAULT_PATH_NORMALIZATION): string {
  if (rawPath.charCodeAt(0) !== SLASH) {
    throw peerError('bad_request', 'path: does not start with "/"');
  }
  const decoded = decodeEscapes(rawPath, options.escapedSlashes);
  return removeDotSegments(options.mergeSlashes ? mergeSlashes(decoded) : decoded);
}
