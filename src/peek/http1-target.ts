/**
 * Request-line parsing (hazard #11, RFC 9112 §3) and request-target forms (hazard #8,
 * RFC 9112 §3.2): origin-form `/p?q`, absolute-form `http://a/p?q`, authority-form `a:443`
 * (CONNECT only), asterisk-form `*` (OPTIONS only).
 *
 * The path part must consist of RFC 3986 pchar and "/" (so no `\`, which some backends read as
 * "/", and no `#`); the query part may hold any visible ASCII except `#`, because real clients
 * send unescaped `|`, `"` or `{}` there and it is never used to decide a path.
 */

import { peerError } from '../base/errors.ts';
import { clip, isToken } from './http1-fields.ts';
import { type Authority, parseAuthority } from './http1-host.ts';
import { DEFAULT_PATH_NORMALIZATION, normalizePath, type PathNormalization } from './path.ts';

/** The three parts of a request line. */
export interface RequestLine {
  readonly method: string;
  readonly target: string;
  readonly versionMinor: 0 | 1;
}

/** What the request-target says about routing. */
export interface TargetParts {
  /** Normalised path; '*' for asterisk-form; undefined for authority-form (CONNECT). */
  readonly path: string | undefined;
  /** Raw query without '?'. */
  readonly query: string;
  /** The authority of absolute-form or authority-form targets. */
  readonly authority: Authority | undefined;
  /** Lower-cased scheme of absolute-form targets, else ''. */
  readonly scheme: string;
}

function bad(what: string): Error {
  return peerError('bad_request', `http1: ${what}`);
}

/** Splits `METHOD SP target SP HTTP/1.x` exactly: single spaces, upper-case version, 1.0 or 1.1. */
export function parseRequestLine(line: string): RequestLine {
  const sp1 = line.indexOf(' ');
  const sp2 = sp1 === -1 ? -1 : line.indexOf(' ', sp1 + 1);
  if (sp2 === -1) throw bad('request line is not "method target version" (HTTP/0.9?)');
  if (line.indexOf(' ', sp2 + 1) !== -1 || sp2 === sp1 + 1) {
    throw bad('request line has extra spaces');
  }
  const method = line.slice(0, sp1);
  if (!isToken(method)) throw bad(`invalid method "${clip(method)}"`);
  const version = line.slice(sp2 + 1);
  let versionMinor: 0 | 1;
  if (version === 'HTTP/1.1') versionMinor = 1;
  else if (version === 'HTTP/1.0') versionMinor = 0;
  else throw bad(`unsupported version "${clip(version)}" at byte ${sp2 + 1} of the request line`);
  return { method, target: line.slice(sp1 + 1, sp2), versionMinor };
}

// RFC 3986 pchar = unreserved / pct-encoded / sub-delims / ":" / "@", plus "/" between segments.
const PATH_CHARS = /^[A-Za-z0-9\-._~%!$&'()*+,;=:@/]*$/;
const ABSOLUTE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/** Classifies and validates the target of a request with `method`; `paths` says how to normalise. */
export function parseTarget(
  method: string,
  target: string,
  paths: PathNormalization = DEFAULT_PATH_NORMALIZATION,
): TargetParts {
  if (target.indexOf('#') !== -1) throw bad('fragment ("#") in request-target');
  if (method === 'CONNECT') {
    if (target.charCodeAt(0) === 0x2f || target === '*') throw bad('CONNECT needs an authority-form target');
    const authority = parseAuthority(target, 'CONNECT target');
    if (authority.port === undefined || authority.host === '') throw bad('CONNECT target needs host:port');
    return { path: undefined, query: '', authority, scheme: '' };
  }
  if (target === '*') {
    if (method !== 'OPTIONS') throw bad(`asterisk-form target with ${clip(method)}`);
    return { path: '*', query: '', authority: undefined, scheme: '' };
  }
  if (target.charCodeAt(0) === 0x2f) return splitPathQuery(target, 0, paths, undefined, '');
  const m = ABSOLUTE.exec(target);
  if (m === null) throw bad(`request-target "${clip(target)}" is not origin-form (does not start with "/")`);
  const scheme = m[1]!.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') throw bad(`unsupported scheme "${clip(scheme)}" in request-target`);
  const from = m[0].length;
  let end = from;
  while (end < target.length && target[end] !== '/' && target[end] !== '?') end++;
  const authority = parseAuthority(target.slice(from, end), 'target authority');
  if (authority.host === '') throw bad('absolute-form target with an empty host');
  const pq = end === target.length || target[end] === '?' ? `/${target.slice(end)}` : target.slice(end);
  return splitPathQuery(pq, end, paths, authority, scheme);
}

/** Validates and normalises `path[?query]` (which starts with "/"); the target's parts, in one object. */
function splitPathQuery(
  pq: string,
  offset: number,
  paths: PathNormalization,
  authority: Authority | undefined,
  scheme: string,
): TargetParts {
  const q = pq.indexOf('?');
  const rawPath = q === -1 ? pq : pq.slice(0, q);
  if (!PATH_CHARS.test(rawPath)) {
    const at = rawPath.search(/[^A-Za-z0-9\-._~%!$&'()*+,;=:@/]/);
    throw bad(`invalid character "${rawPath[at]}" in path at offset ${offset + at} of the target`);
  }
  let path: string;
  try {
    path = normalizePath(rawPath, paths);
  } catch (e) {
    throw bad((e as Error).message); // chain: "http1: path: …"
  }
  return { path, query: q === -1 ? '' : pq.slice(q + 1), authority, scheme };
}
