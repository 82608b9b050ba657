/**
 * The HTTP/1 request-head peek: bytes in, a strictly validated `Http1Head` out.
 *
 *   socket bytes ─► accumulated buf ─► HeadScanner (head end, bare CR/LF, limits; incremental)
 *                                          │ complete head
 *                                          ▼
 *                     our strict parse (request line, field lines, Host, CL/TE, target)
 *                                          │
 *                                          ▼
 *                     llhttp-wasm once over the head (basic grammar) + cross-check ─► Http1Head
 *
 * 1. `Http1HeadScanner.feed(buf)` is called with the whole accumulated buffer after each read;
 *    it returns undefined until the head is complete (or throws 400/414/431). The scanner keeps
 *    its scan offset, so trickled bytes cost O(n) overall. `peekHttp1` is the one-shot form.
 * 2. A complete head is decoded once as latin1 and split on CRLF (the scanner guarantees there
 *    is no other line break). Every strict rule of reference/peers-reliability.md §3 rows 1–13
 *    is enforced here, in head order, so the verdict does not depend on how bytes were split.
 * 3. llhttp must accept the head too, and must agree on the target, version and field count.
 * 4. Choices: one leading empty line is skipped (a second → 400); more than one Content-Length
 *    (even identical: `5, 5` or two `5` lines) is refused, as llhttp and nginx do; more than
 *    one Transfer-Encoding line is refused; `Content-Length: 0` is framing `none`; methods
 *    llhttp does not know are refused; an Upgrade offering `h2c` or `h2` is refused (RFC 9113
 *    §3.1), with or without `Connection: upgrade`.
 */

import { peerError } from '../errors.ts';
import {
  CHUNKED,
  checkTransferEncoding,
  connectionTokens,
  type HeaderPair,
  NO_BODY,
  parseContentLength,
  parseFieldLine,
  type RequestBodyFraming,
  refuseH2Upgrade,
  upgradeProtocols,
} from './http1-fields.ts';
import { type Authority, parseAuthority, sameAuthority } from './http1-host.ts';
import { HeadScanner } from './http1-scan.ts';
import { parseRequestLine, parseTarget } from './http1-target.ts';
import { llhttpHead } from './llhttp.ts';
import { DEFAULT_PATH_NORMALIZATION, type PathNormalization } from './path.ts';

export type { BodyFraming, HeaderPair, RequestBodyFraming } from './http1-fields.ts';

/** A validated HTTP/1 request head. */
export interface Http1Head {
  readonly method: string;
  /** The request-target exactly as sent. */
  readonly target: string;
  readonly versionMinor: 0 | 1;
  /** Raw [name, value] pairs in wire order; values without surrounding OWS. */
  readonly headers: readonly HeaderPair[];
  /** Lower-cased, without port and one trailing dot; IPv6 keeps brackets; '' when absent. */
  readonly host: string;
  readonly port: number | undefined;
  /** Normalised path for matching; '*' for `OPTIONS *`; undefined for CONNECT. */
  readonly path: string | undefined;
  /** Raw query without '?'; '' when absent. */
  readonly query: string;
  /** Bytes from the buffer start through the final CRLFCRLF (a skipped leading CRLF included). */
  readonly headLength: number;
  readonly bodyFraming: RequestBodyFraming;
  /** `Connection: upgrade` together with an Upgrade header. */
  readonly upgrade: boolean;
  /**
   * The protocols the request offers to switch to (lower-cased names, no versions) when
   * `upgrade` is true, else empty: a 101 answer may only announce these (RFC 9110 §7.8).
   */
  readonly upgradeTo: readonly string[];
  /** `Connection: close`, or HTTP/1.0 without `keep-alive`. */
  readonly connectionClose: boolean;
  readonly expectContinue: boolean;
}

/** Incremental request-head peek for one connection; `reset()` before the next request's head. */
export class Http1HeadScanner {
  readonly #scanner: HeadScanner;
  readonly #paths: PathNormalization;
  readonly #max: number;

  /** `paths`: the listener's `pathNormalization` (src/peek/path.ts). */
  constructor(maxHeaderBytes: number, paths: PathNormalization = DEFAULT_PATH_NORMALIZATION) {
    this.#scanner = new HeadScanner('request', maxHeaderBytes);
    this.#paths = paths;
    this.#max = maxHeaderBytes;
  }

  /** True when this scanner was made for these settings (takeHeadScanner). */
  fits(maxHeaderBytes: number, paths: PathNormalization): boolean {
    return this.#max === maxHeaderBytes && this.#paths === paths;
  }

  /** Feeds the accumulated buffer (starting at the head); undefined means "need more bytes". */
  feed(buf: Buffer): Http1Head | undefined {
    const end = this.#scanner.scan(buf);
    if (end === -1) return undefined;
    return parseHead(buf, this.#scanner.start, this.#scanner.startLineEnd, end, this.#paths);
  }

  /** Starts over for a new head at offset 0 of the next buffer. */
  reset(): void {
    this.#scanner.reset();
  }
}

/** One-shot peek: the head, undefined when more bytes are needed, or a thrown peer error. */
export function peekHttp1(
  buf: Buffer,
  maxHeaderBytes: number,
  paths: PathNormalization = DEFAULT_PATH_NORMALIZATION,
): Http1Head | undefined {
  return new Http1HeadScanner(maxHeaderBytes, paths).feed(buf);
}

const NONE: readonly string[] = Object.freeze([]);

/** Methods whose body an HTTP/1.0 hop may not expect (hazard #15). */
const NO_BODY_1_0 = new Set(['GET', 'HEAD', 'DELETE']);

function bad(what: string): Error {
  return peerError('bad_request', `http1: ${what}`);
}

/**
 * Field values the framing and routing rules need, gathered in one pass; a list is made only
 * when its field is present (most heads carry Host alone), so nothing else is allocated.
 */
interface Gathered {
  hosts: string[] | undefined;
  contentLength: string[] | undefined;
  transferEncoding: string[] | undefined;
  connection: string[] | undefined;
  upgrade: string[] | undefined;
  expect: string | undefined;
}

const NO_TOKENS: ReadonlySet<string> = new Set();

/** Parses and validates a complete head: bytes [start, end) of `buf`. */
function parseHead(buf: Buffer, start: number, lineEnd: number, end: number, paths: PathNormalization): Http1Head {
  const line = buf.toString('latin1', start, lineEnd);
  const { method, target, versionMinor } = parseRequestLine(line);
  const headers: HeaderPair[] = [];
  const g: Gathered = {
    hosts: undefined,
    contentLength: undefined,
    transferEncoding: undefined,
    connection: undefined,
    upgrade: undefined,
    expect: undefined,
  };
  const at = lineEnd + 2;
  if (at < end - 2) {
    const text = buf.toString('latin1', at, end - 4);
    let from = 0;
    for (let n = 1; from <= text.length; n++) {
      let to = text.indexOf('\r\n', from);
      if (to === -1) to = text.length;
      const pair = parseFieldLine(text.slice(from, to), n, at + from, 'http1');
      headers.push(pair);
      gather(g, pair);
      from = to + 2;
    }
  }
  const parts = parseTarget(method, target, paths);
  const hostAuth = resolveHost(g, versionMinor, parts.authority, parts.scheme);
  const bodyFraming = framing(g, versionMinor);
  // Hazard #15: an HTTP/1.0 intermediary may ignore a body on these methods and read it as the
  // next request; HAProxy refuses them by default (found by test/adversarial/http1-oracles).
  if (versionMinor === 0 && bodyFraming.kind !== 'none' && NO_BODY_1_0.has(method)) {
    throw bad(`a body on an HTTP/1.0 ${method} request`);
  }
  const offered = g.upgrade === undefined ? NONE : upgradeProtocols(g.upgrade);
  refuseH2Upgrade(offered, 'http1');
  crossCheck(buf, start, end, method.length + 1, target.length, versionMinor, headers.length);
  const tokens = g.connection === undefined ? NO_TOKENS : connectionTokens(g.connection);
  const upgrade = g.upgrade !== undefined && tokens.has('upgrade');
  return {
    method,
    target,
    versionMinor,
    headers,
    host: hostAuth.host,
    port: hostAuth.port,
    path: parts.path,
    query: parts.query,
    headLength: end,
    bodyFraming,
    upgrade,
    upgradeTo: upgrade ? offered : NONE,
    connectionClose: tokens.has('close') || (versionMinor === 0 && !tokens.has('keep-alive')),
    expectContinue: g.expect !== undefined && g.expect.toLowerCase() === '100-continue',
  };
}

function gather(g: Gathered, [name, value]: HeaderPair): void {
  // Names are tokens (checked), so a length switch before lower-casing keeps this cheap; a list
  // is made only for a header that is present.
  switch (name.length) {
    case 4:
      if (name.toLowerCase() === 'host') g.hosts = append(g.hosts, value);
      break;
    case 6:
      if (name.toLowerCase() === 'expect') g.expect = value;
      break;
    case 7:
      if (name.toLowerCase() === 'upgrade') g.upgrade = append(g.upgrade, value);
      break;
    case 10:
      if (name.toLowerCase() === 'connection') g.connection = append(g.connection, value);
      break;
    case 14:
      if (name.toLowerCase() === 'content-length') g.contentLength = append(g.contentLength, value);
      break;
    case 17:
      if (name.toLowerCase() === 'transfer-encoding') g.transferEncoding = append(g.transferEncoding, value);
      break;
  }
}

function append(list: string[] | undefined, value: string): string[] {
  if (list === undefined) return [value];
  list.push(value);
  return list;
}

/** Host rules (#8, #9): exactly one Host on HTTP/1.1; a target authority must agree with it. */
function resolveHost(g: Gathered, versionMinor: 0 | 1, target: Authority | undefined, scheme: string): Authority {
  if (g.hosts !== undefined && g.hosts.length > 1) throw bad(`${g.hosts.length} Host header lines`);
  const raw = g.hosts?.[0];
  if (raw === undefined) {
    if (versionMinor === 1) throw bad('no Host header in an HTTP/1.1 request');
    return target ?? { host: '', port: undefined };
  }
  const host = parseAuthority(raw, 'Host');
  if (target !== undefined && !sameAuthority(target, host, scheme)) {
    throw bad(`request-target authority "${target.host}" differs from Host "${host.host}"`);
  }
  return host;
}

/** Body framing (#1–#4, RFC 9112 §6.3): TE and CL are exclusive; TE needs HTTP/1.1. */
function framing(g: Gathered, versionMinor: 0 | 1): RequestBodyFraming {
  if (g.transferEncoding !== undefined) {
    if (g.contentLength !== undefined) throw bad('both Transfer-Encoding and Content-Length');
    if (versionMinor === 0) throw bad('Transfer-Encoding in an HTTP/1.0 request');
    checkTransferEncoding(g.transferEncoding, 'http1');
    return CHUNKED;
  }
  if (g.contentLength === undefined) return NO_BODY;
  const length = parseContentLength(g.contentLength, 'http1');
  return length === 0 ? NO_BODY : { kind: 'length', length };
}

/**
 * llhttp must accept the head and see the same target (the same bytes: `targetAt`, after the
 * method and its one space), version and number of fields.
 */
function crossCheck(
  buf: Buffer,
  start: number,
  end: number,
  targetAt: number,
  targetLength: number,
  versionMinor: number,
  fields: number,
): void {
  const r = llhttpHead('REQUEST', buf, start, end);
  if (!r.ok) throw bad(`llhttp: ${r.reason}`);
  if (r.urlAt !== targetAt || r.urlLength !== targetLength || r.versionMinor !== versionMinor || r.fields !== fields) {
    throw bad('parser disagreement on the request head');
  }
}
