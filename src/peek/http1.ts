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
 * 2. A complete head is checked on its bytes (http1-bytes.ts) where it has a common form; what
 *    those checks do not accept goes to the string rules (http1-target.ts, http1-fields.ts,
 *    http1-host.ts), which word the refusal. Every strict rule of reference/peers-reliability.md
 *    §3 rows 1–13 is enforced, in head order, so the verdict does not depend on how bytes were
 *    split. The field lines stay one latin1 string until `headers` is read (http1-head.ts).
 * 3. llhttp must accept the head too, and must agree on the target, version and field count.
 * 4. Choices: one leading empty line is skipped (a second → 400); more than one Content-Length
 *    (even identical: `5, 5` or two `5` lines) is refused, as llhttp and nginx do; more than
 *    one Transfer-Encoding line is refused; `Content-Length: 0` is framing `none`; methods
 *    llhttp does not know are refused; an Upgrade offering `h2c` or `h2` is refused (RFC 9113
 *    §3.1), with or without `Connection: upgrade`, but for `h2c` on a scanner made with
 *    `h2cUpgrade` (an `h2c: route` listener's first request), checked by h2c-upgrade.ts.
 */

import { peerError } from '../base/errors.ts';
import { checkH2cUpgrade } from './h2c-upgrade.ts';
import {
  checkField,
  Field,
  type FieldSpan,
  fieldOf,
  methodOf,
  plainHost,
  plainPathEnd,
  versionOf,
} from './http1-bytes.ts';
import {
  CHUNKED,
  checkTransferEncoding,
  connectionTokens,
  NO_BODY,
  parseContentLength,
  parseFieldLine,
  type RequestBodyFraming,
  refuseH2Upgrade,
  upgradeProtocols,
} from './http1-fields.ts';
import { ParsedHead } from './http1-head.ts';
import { type Authority, parseAuthority, sameAuthority } from './http1-host.ts';
import { HeadScanner } from './http1-scan.ts';
import { parseRequestLine, parseTarget } from './http1-target.ts';
import type { Http1Head } from './http1-types.ts';
import { llhttpHead } from './llhttp.ts';
import { DEFAULT_PATH_NORMALIZATION, type PathNormalization } from './path.ts';

export type { BodyFraming, HeaderPair, RequestBodyFraming } from './http1-fields.ts';
export type { Http1Head } from './http1-types.ts';

/** Incremental request-head peek for one connection; `reset()` before the next request's head. */
export class Http1HeadScanner {
  readonly #scanner: HeadScanner;
  readonly #paths: PathNormalization;
  readonly #max: number;
  readonly #maxFields: number;
  readonly #h2c: boolean;

  /**
   * `paths`: the listener's `pathNormalization` (src/peek/path.ts); `maxHeaderCount`: field
   * lines beyond it are refused (431); `h2cUpgrade`: an `Upgrade: h2c` request that
   * h2c-upgrade.ts accepts passes (an `h2c: route` listener's first request), else 400.
   */
  constructor(
    maxHeaderBytes: number,
    paths: PathNormalization = DEFAULT_PATH_NORMALIZATION,
    maxHeaderCount = DEFAULT_MAX_HEADER_COUNT,
    h2cUpgrade = false,
  ) {
    this.#scanner = new HeadScanner('request', maxHeaderBytes);
    this.#paths = paths;
    this.#max = maxHeaderBytes;
    this.#maxFields = maxHeaderCount;
    this.#h2c = h2cUpgrade;
  }

  /** True when this scanner was made for these settings (takeHeadScanner). */
  fits(maxHeaderBytes: number, paths: PathNormalization, maxHeaderCount: number): boolean {
    return this.#max === maxHeaderBytes && this.#paths === paths && this.#maxFields === maxHeaderCount && !this.#h2c;
  }

  /** Feeds the accumulated buffer (starting at the head); undefined means "need more bytes". */
  feed(buf: Buffer): Http1Head | undefined {
    const end = this.#scanner.scan(buf);
    if (end === -1) return undefined;
    return parseHead(
      buf,
      this.#scanner.start,
      this.#scanner.startLineEnd,
      end,
      this.#paths,
      this.#maxFields,
      this.#h2c,
    );
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
  maxHeaderCount = DEFAULT_MAX_HEADER_COUNT,
): Http1Head | undefined {
  return new Http1HeadScanner(maxHeaderBytes, paths, maxHeaderCount).feed(buf);
}

/** `limits.maxHeaderCount`'s default (src/config/schema.ts), for callers without a config. */
export const DEFAULT_MAX_HEADER_COUNT = 100;

const NONE: readonly string[] = Object.freeze([]);

/** Methods whose body an HTTP/1.0 hop may not expect (hazard #15). */
const NO_BODY_1_0 = new Set(['GET', 'HEAD', 'DELETE']);

function bad(what: string): Error {
  return peerError('bad_request', `http1: ${what}`);
}

const NO_TOKENS: ReadonlySet<string> = new Set();
const SP = 0x20;
const CR = 0x0d;

/** Scratch of the byte checks (one head at a time, synchronously). */
const span: FieldSpan = { colon: 0, valueFrom: 0, valueTo: 0 };
const hostAt = { colon: 0, port: -1 };

function append(list: string[] | undefined, value: string): string[] {
  if (list === undefined) return [value];
  list.push(value);
  return list;
}

/**
 * Parses and validates a complete head: bytes [start, end) of `buf`. The common forms are
 * checked on the bytes (http1-bytes.ts); whatever those checks do not accept is decided by the
 * string-based rules (parseRequestLine, parseFieldLine, parseTarget, parseAuthority), which
 * refuse it with the same words as before, in the same order: request line, field lines in
 * order, target, Host, framing, upgrade, llhttp.
 */
function parseHead(
  buf: Buffer,
  start: number,
  lineEnd: number,
  end: number,
  paths: PathNormalization,
  maxFields: number,
  h2c: boolean,
): Http1Head {
  // The request line: the scanner let only SP and visible ASCII through.
  let sp1 = -1;
  let sp2 = -1;
  let spaces = 0;
  for (let i = start; i < lineEnd; i++) {
    if (buf[i] !== SP) continue;
    if (++spaces === 1) sp1 = i;
    else if (spaces === 2) sp2 = i;
    else break;
  }
  let method = spaces === 2 && sp2 > sp1 + 1 ? methodOf(buf, start, sp1) : undefined;
  let versionMinor = method === undefined ? -1 : versionOf(buf, sp2 + 1, lineEnd);
  // The field lines: checked on their bytes; the values of the six fields read below become strings.
  const at = lineEnd + 2;
  const hasFields = at < end - 2;
  let target: string;
  let fields: string;
  if (method === undefined || versionMinor === -1) {
    const line = parseRequestLine(buf.toString('latin1', start, lineEnd)); // throws the reason
    method = line.method;
    versionMinor = line.versionMinor;
    target = line.target;
    fields = hasFields ? buf.toString('latin1', at, end - 4) : '';
  } else {
    // The target and the field lines from one Buffer#toString (a call into C++ each, issue 18).
    const text = buf.toString('latin1', sp1 + 1, hasFields ? end - 4 : sp2);
    target = hasFields ? text.slice(0, sp2 - sp1 - 1) : text;
    fields = hasFields ? text.slice(at - sp1 - 1) : '';
  }
  const v: 0 | 1 = versionMinor;
  let count = 0;
  let hosts = 0;
  let hostFrom = 0;
  let hostTo = 0;
  let contentLength: string[] | undefined;
  let transferEncoding: string[] | undefined;
  let connection: string[] | undefined;
  let upgradeValues: string[] | undefined;
  let expect: string | undefined;
  for (let from = at; from < end - 2; ) {
    let to = from;
    while (buf[to] !== CR) to++;
    // Node backends keep 2,000 fields, HAProxy refuses over 101: past the limit, 431 (issue 40 item 11).
    if (++count > maxFields) throw peerError('header_too_large', `http1: more than ${maxFields} header fields`);
    if (!checkField(buf, from, to, span)) {
      parseFieldLine(fields.slice(from - at, to - at), count, from, 'http1'); // throws the reason
      throw bad(`header ${count} at byte ${from}`); // not reached: both apply the same rules
    }
    const field = fieldOf(buf, from, span.colon);
    if (field === Field.Host) {
      if (++hosts === 1) {
        hostFrom = span.valueFrom;
        hostTo = span.valueTo;
      }
    } else if (field !== Field.Other) {
      const value = fields.slice(span.valueFrom - at, span.valueTo - at);
      if (field === Field.ContentLength) contentLength = append(contentLength, value);
      else if (field === Field.TransferEncoding) transferEncoding = append(transferEncoding, value);
      else if (field === Field.Connection) connection = append(connection, value);
      else if (field === Field.Upgrade) upgradeValues = append(upgradeValues, value);
      else expect = value;
    }
    from = to + 2;
  }
  // The target: an origin-form path that is already normal is taken as is.
  const targetAt = start + method.length + 1;
  const targetEnd = targetAt + target.length;
  const q = method === 'CONNECT' ? -1 : plainPathEnd(buf, targetAt, targetEnd);
  let path: string | undefined;
  let query = '';
  let authority: Authority | undefined;
  let scheme = '';
  if (q !== -1) {
    path = q === targetEnd ? target : target.slice(0, q - targetAt);
    if (q !== targetEnd) query = target.slice(q - targetAt + 1);
  } else {
    const parts = parseTarget(method, target, paths);
    path = parts.path;
    query = parts.query;
    authority = parts.authority;
    scheme = parts.scheme;
  }
  // Host rules (#8, #9): exactly one Host on HTTP/1.1; a target authority must agree with it.
  if (hosts > 1) throw bad(`${hosts} Host header lines`);
  let host: string;
  let port: number | undefined;
  if (hosts === 0) {
    if (v === 1) throw bad('no Host header in an HTTP/1.1 request');
    host = authority?.host ?? '';
    port = authority?.port;
  } else {
    if (plainHost(buf, hostFrom, hostTo, hostAt)) {
      host = fields.slice(hostFrom - at, hostAt.colon - at);
      port = hostAt.port === -1 ? undefined : hostAt.port;
    } else {
      const parsed = parseAuthority(fields.slice(hostFrom - at, hostTo - at), 'Host');
      host = parsed.host;
      port = parsed.port;
    }
    if (authority !== undefined && !sameAuthority(authority, { host, port }, scheme)) {
      throw bad(`request-target authority "${authority.host}" differs from Host "${host}"`);
    }
  }
  const bodyFraming = framing(contentLength, transferEncoding, v);
  // Hazard #15: an HTTP/1.0 intermediary may ignore a body on these methods and read it as the
  // next request; HAProxy refuses them by default (found by test/adversarial/http1-oracles).
  if (v === 0 && bodyFraming.kind !== 'none' && NO_BODY_1_0.has(method)) {
    throw bad(`a body on an HTTP/1.0 ${method} request`);
  }
  const offered = upgradeValues === undefined ? NONE : upgradeProtocols(upgradeValues);
  refuseH2Upgrade(offered, 'http1', h2c);
  crossCheck(buf, start, end, method.length + 1, target.length, v, count);
  const tokens = connection === undefined ? NO_TOKENS : connectionTokens(connection);
  // RFC 9110 §7.8: Upgrade in an HTTP/1.0 request is ignored, so no 101 can switch it (issue 40 item 8).
  const upgrade = v === 1 && upgradeValues !== undefined && tokens.has('upgrade');
  const head = new ParsedHead(
    method,
    target,
    v,
    host,
    port,
    path,
    query,
    end,
    bodyFraming,
    upgrade,
    upgrade ? offered : NONE,
    tokens.has('close') || (v === 0 && !tokens.has('keep-alive')),
    expect !== undefined && expect.toLowerCase() === '100-continue',
    fields,
  );
  if (h2c && offered.includes('h2c')) checkH2cUpgrade(head, tokens);
  return head;
}

/** Body framing (#1–#4, RFC 9112 §6.3): TE and CL are exclusive; TE needs HTTP/1.1. */
function framing(
  contentLength: string[] | undefined,
  transferEncoding: string[] | undefined,
  versionMinor: 0 | 1,
): RequestBodyFraming {
  if (transferEncoding !== undefined) {
    if (contentLength !== undefined) throw bad('both Transfer-Encoding and Content-Length');
    if (versionMinor === 0) throw bad('Transfer-Encoding in an HTTP/1.0 request');
    checkTransferEncoding(transferEncoding, 'http1');
    return CHUNKED;
  }
  if (contentLength === undefined) return NO_BODY;
  const length = parseContentLength(contentLength, 'http1');
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
