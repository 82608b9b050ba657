/**
 * The HTTP/1 response-head peek, for per-request routing: where does this response end?
 *
 * 1. `Http1ResponseScanner.feed(buf, requestMethod, upgradeTo)` finds the head like the request peek
 *    (HeadScanner: bare CR/LF refused, at most one leading CRLF, `maxHeaderBytes` → 431).
 * 2. The status line must be `HTTP/1.0|1.1 SP 3DIGIT [SP reason]`; field lines follow the same
 *    strict rules as requests (`parseFieldLine`'s, same messages). The response side only needs
 *    its framing (issue 18): the head is checked on its bytes, without llhttp and without a
 *    string per field; only the values of Content-Length, Transfer-Encoding, Connection and
 *    Upgrade become strings, to be judged by the shared rules of http1-fields.ts.
 * 3. Framing follows RFC 9112 §6.3: a response to HEAD, any 1xx, 204 and 304 have no body;
 *    101 and a 2xx answer to CONNECT make the connection an opaque tunnel; Transfer-Encoding
 *    ending in chunked is chunked, any other Transfer-Encoding reads until close; then
 *    Content-Length; otherwise the body runs until the server closes.
 * 4. Transfer-Encoding together with Content-Length, Transfer-Encoding on HTTP/1.0, `chunked`
 *    not last or twice, and any invalid or repeated Content-Length are refused (bad_request):
 *    the caller must not keep the connection when it cannot tell where the response ends.
 * 5. A 101 is a tunnel only when the request asked to upgrade (`upgradeTo`, the protocols it
 *    offered with `Connection: upgrade`) and the 101's Upgrade names only offered protocols
 *    (RFC 9110 §7.8, §15.2.2); any other 101 is refused, so a backend cannot turn a plain
 *    request's connection into a tunnel that later requests, routed elsewhere, would enter.
 */

import { peerError } from '../base/errors.ts';
import { fieldValue } from './http1-bytes.ts';
import {
  type BodyFraming,
  CHUNKED,
  clip,
  connectionTokens,
  isToken,
  NO_BODY,
  parseContentLength,
  splitList,
  TCHAR,
  upgradeProtocols,
} from './http1-fields.ts';
import { HeadScanner, hex } from './http1-scan.ts';

const WHO = 'http1 response';
const NONE: readonly string[] = Object.freeze([]);

/** A validated HTTP/1 response head. */
export interface Http1ResponseHead {
  readonly status: number;
  readonly versionMinor: 0 | 1;
  /** Bytes from the buffer start through the final CRLFCRLF. */
  readonly headLength: number;
  readonly bodyFraming: BodyFraming;
  /** `Connection: close`, or HTTP/1.0 without `keep-alive`: the server will close after it. */
  readonly connectionClose: boolean;
}

/** The head `feed` fills: one per scanner, valid until its next `feed` (nothing allocated per response). */
interface MutableHead {
  status: number;
  versionMinor: 0 | 1;
  headLength: number;
  bodyFraming: BodyFraming;
  connectionClose: boolean;
}

/** Incremental response-head peek; `reset()` before the next response. */
export class Http1ResponseScanner {
  readonly #scanner: HeadScanner;
  readonly #head: MutableHead = {
    status: 0,
    versionMinor: 1,
    headLength: 0,
    bodyFraming: NO_BODY,
    connectionClose: false,
  };
  /** The framing of a response with a Content-Length, reused like the head. */
  readonly #length: { kind: 'length'; length: number } = { kind: 'length', length: 0 };

  readonly #max: number;

  constructor(maxHeaderBytes: number) {
    this.#scanner = new HeadScanner('response', maxHeaderBytes);
    this.#max = maxHeaderBytes;
  }

  /** The head size limit it was made with (takeResponseScanner). */
  get maxHeaderBytes(): number {
    return this.#max;
  }

  /**
   * Feeds the accumulated buffer; undefined means "need more bytes". `upgradeTo` is what the
   * request offered to switch to (Http1Head.upgradeTo; empty: it did not ask to upgrade). The
   * head returned is this scanner's own, valid until the next `feed`.
   */
  feed(buf: Buffer, requestMethod: string, upgradeTo: readonly string[] = NONE): Http1ResponseHead | undefined {
    const end = this.#scanner.scan(buf);
    if (end === -1) return undefined;
    parseResponse(
      buf,
      this.#scanner.start,
      this.#scanner.startLineEnd,
      end,
      requestMethod,
      upgradeTo,
      this.#head,
      this.#length,
    );
    return this.#head;
  }

  /** Starts over for a new head at offset 0 of the next buffer. */
  reset(): void {
    this.#scanner.reset();
  }
}

/** One-shot response peek for the answer to a request with `requestMethod`. */
export function peekHttp1Response(
  buf: Buffer,
  maxHeaderBytes: number,
  requestMethod: string,
  upgradeTo: readonly string[] = NONE,
): Http1ResponseHead | undefined {
  return new Http1ResponseScanner(maxHeaderBytes).feed(buf, requestMethod, upgradeTo);
}

function bad(what: string): Error {
  return peerError('bad_request', `${WHO}: ${what}`);
}

const H = 0x48;
const T = 0x54;
const P = 0x50;
const SLASH = 0x2f;
const ONE = 0x31;
const DOT = 0x2e;
const SP = 0x20;
const HT = 0x09;
const COLON = 0x3a;
const CR = 0x0d;
const ZERO = 0x30;
const NINE = 0x39;

/** The framing fields by name (lower-cased), matched on bytes without making a string. */
const CONNECTION = bytesOf('connection');
const TRANSFER_ENCODING = bytesOf('transfer-encoding');
const CONTENT_LENGTH = bytesOf('content-length');
const UPGRADE = bytesOf('upgrade');

function bytesOf(name: string): Uint8Array {
  return Uint8Array.from(name, (ch) => ch.charCodeAt(0));
}

/** True when bytes [from, from + name.length) of `buf` are `name` in any case (a token: checked). */
function nameIs(buf: Buffer, from: number, length: number, name: Uint8Array): boolean {
  if (length !== name.length) return false;
  for (let i = 0; i < length; i++) if ((buf[from + i]! | 0x20) !== name[i]) return false;
  return true;
}

/**
 * Where a framing field's lines are: the first one's value as offsets into the head's buffer
 * (most heads carry each at most once: no string is made), later ones as strings with it.
 */
interface Field {
  count: number;
  from: number;
  to: number;
  more: string[] | undefined;
}

/** The four framing fields of the head being parsed (one set: parsing is synchronous). */
const CL: Field = { count: 0, from: 0, to: 0, more: undefined };
const CONN: Field = { count: 0, from: 0, to: 0, more: undefined };
const TE: Field = { count: 0, from: 0, to: 0, more: undefined };
const UPG: Field = { count: 0, from: 0, to: 0, more: undefined };

function clear(f: Field): void {
  f.count = 0;
  f.more = undefined;
}

/** Notes a line of the field with its value at bytes [v, e). */
function keep(f: Field, buf: Buffer, v: number, e: number): void {
  if (f.count++ === 0) {
    f.from = v;
    f.to = e;
    return;
  }
  if (f.more === undefined) f.more = [buf.toString('latin1', f.from, f.to)];
  f.more.push(buf.toString('latin1', v, e));
}

/** The field's values as strings, in order (the rare paths: several lines, unusual values). */
function values(f: Field, buf: Buffer): string[] {
  if (f.count === 0) return EMPTY;
  return f.more ?? [buf.toString('latin1', f.from, f.to)];
}

/** True when the field is one line whose value is `word` in any case. */
function onlyIs(f: Field, buf: Buffer, word: Uint8Array): boolean {
  return f.count === 1 && nameIs(buf, f.from, f.to - f.from, word);
}

const EMPTY: string[] = [];
const KEEP_ALIVE = bytesOf('keep-alive');
const CLOSE = bytesOf('close');
const CHUNKED_WORD = bytesOf('chunked');
const MAX_CL_DIGITS = 15;
const CLOSE_DELIMITED: BodyFraming = Object.freeze({ kind: 'close' });
const TUNNEL: BodyFraming = Object.freeze({ kind: 'tunnel' });

/** The Content-Length of one line of digits, read on its bytes; -1 for anything else. */
function digitsOf(f: Field, buf: Buffer): number {
  if (f.count !== 1 || f.to === f.from || f.to - f.from > MAX_CL_DIGITS) return -1;
  let n = 0;
  for (let i = f.from; i < f.to; i++) {
    const c = buf[i]!;
    if (c < ZERO || c > NINE) return -1;
    n = n * 10 + (c - ZERO);
  }
  return n;
}

/** `HTTP/1.0|1.1 SP 3DIGIT [SP reason]` on bytes [start, lineEnd); returns the status code. */
function statusLine(buf: Buffer, start: number, lineEnd: number): number {
  const ok =
    lineEnd - start >= 12 &&
    buf[start] === H &&
    buf[start + 1] === T &&
    buf[start + 2] === T &&
    buf[start + 3] === P &&
    buf[start + 4] === SLASH &&
    buf[start + 5] === ONE &&
    buf[start + 6] === DOT &&
    (buf[start + 7] === ZERO || buf[start + 7] === ONE) &&
    buf[start + 8] === SP &&
    isDigit(buf[start + 9]!) &&
    isDigit(buf[start + 10]!) &&
    isDigit(buf[start + 11]!) &&
    (lineEnd - start === 12 || buf[start + 12] === SP);
  if (!ok) throw bad('status line is not "HTTP/1.x nnn reason"');
  return (buf[start + 9]! - ZERO) * 100 + (buf[start + 10]! - ZERO) * 10 + (buf[start + 11]! - ZERO);
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** Field-name bytes (tokens), and the value bytes refused (CTL but HT, and DEL), by byte. */
const NAME_BYTE = new Uint8Array(256);
NAME_BYTE.set(TCHAR);
/** The value span `fieldValue` fills for `fieldLine` (one object, nothing allocated per field). */
const VALUE = { valueFrom: 0, valueTo: 0 };

/**
 * Checks field line number `n`, bytes [from, to), by the rules of `parseFieldLine` (same order,
 * same messages) and keeps the value of a framing field.
 */
function fieldLine(buf: Buffer, from: number, to: number, n: number): void {
  const first = buf[from]!;
  if (first === SP || first === HT) {
    const what = n === 1 ? 'whitespace-led line after the start line' : 'obs-fold (line folding)';
    throw bad(`${what} in header ${n} at byte ${from}`);
  }
  // One pass to the colon that also notes the name's first bad byte; the errors keep their
  // precedence: no colon, then an empty name, then that byte (issue 18: one pass, not two).
  let colon = from;
  let badAt = -1;
  for (; colon < to; colon++) {
    const c = buf[colon]!;
    if (c === COLON) break;
    if (badAt === -1 && NAME_BYTE[c] !== 1) badAt = colon;
  }
  if (colon === to) throw bad(`no colon in header ${n} at byte ${from}`);
  if (colon === from) throw bad(`empty name in header ${n} at byte ${from}`);
  if (badAt !== -1) {
    const c = buf[badAt]!;
    if (c === SP || c === HT) throw bad(`whitespace before colon in header ${n} at byte ${badAt}`);
    throw bad(`invalid byte 0x${hex(c)} in name of header ${n} at byte ${badAt}`);
  }
  const refused = fieldValue(buf, colon + 1, to, VALUE);
  if (refused !== -1) throw bad(`control byte 0x${hex(buf[refused]!)} in value of header ${n} at byte ${refused}`);
  const v = VALUE.valueFrom;
  const e = VALUE.valueTo;
  const length = colon - from;
  if (nameIs(buf, from, length, CONTENT_LENGTH)) keep(CL, buf, v, e);
  else if (nameIs(buf, from, length, CONNECTION)) keep(CONN, buf, v, e);
  else if (nameIs(buf, from, length, TRANSFER_ENCODING)) keep(TE, buf, v, e);
  else if (nameIs(buf, from, length, UPGRADE)) keep(UPG, buf, v, e);
}

/**
 * Parses and validates a complete head: bytes [start, end) of `buf`, the status line ending at
 * `lineEnd`, into `head` (`length`: the framing object it may point at). Bytes only: strings are
 * made only for framing fields that repeat or carry an unusual value.
 */
function parseResponse(
  buf: Buffer,
  start: number,
  lineEnd: number,
  end: number,
  method: string,
  upgradeTo: readonly string[],
  head: MutableHead,
  length: { kind: 'length'; length: number },
): void {
  const status = statusLine(buf, start, lineEnd);
  const versionMinor = buf[start + 7] === ONE ? 1 : 0;
  if (status < 100) throw bad(`status ${status} out of range`);
  clear(CL);
  clear(CONN);
  clear(TE);
  clear(UPG);
  // Field lines: [lineEnd + 2, end - 2), separated by CRLF (the scanner refused bare CR and LF).
  const last = end - 2;
  let from = lineEnd + 2;
  for (let n = 1; from < last; n++) {
    let to = from;
    while (to < last && buf[to] !== CR) to++;
    fieldLine(buf, from, to, n);
    from = to + 2;
  }
  if (status === 101) checkSwitch(values(UPG, buf), upgradeTo);
  let close = versionMinor === 0;
  if (CONN.count > 0) {
    if (onlyIs(CONN, buf, KEEP_ALIVE)) close = false;
    else if (onlyIs(CONN, buf, CLOSE)) close = true;
    else {
      const tokens = connectionTokens(values(CONN, buf));
      close = tokens.has('close') || (versionMinor === 0 && !tokens.has('keep-alive'));
    }
  }
  head.status = status;
  head.versionMinor = versionMinor;
  head.headLength = end;
  head.bodyFraming = responseFraming(status, versionMinor, method, buf, length);
  head.connectionClose = close;
}

/** RFC 9112 §6.3 in order; see the header comment, steps 3–4. */
function responseFraming(
  status: number,
  versionMinor: 0 | 1,
  method: string,
  buf: Buffer,
  framing: { kind: 'length'; length: number },
): BodyFraming {
  if (status === 101 || (method === 'CONNECT' && status >= 200 && status < 300)) return TUNNEL;
  const te = TE.count > 0;
  if (te && CL.count > 0) throw bad('both Transfer-Encoding and Content-Length');
  if (te && versionMinor === 0) throw bad('Transfer-Encoding in an HTTP/1.0 response');
  // Framing headers are validated even where they do not apply, so a bad one always fails.
  let length = -1;
  if (CL.count > 0) {
    length = digitsOf(CL, buf);
    if (length < 0) length = parseContentLength(values(CL, buf), WHO);
  }
  const chunked = te ? onlyIs(TE, buf, CHUNKED_WORD) || endsChunked(values(TE, buf)) : false;
  if (method === 'HEAD' || status < 200 || status === 204 || status === 304) return NO_BODY;
  if (te) return chunked ? CHUNKED : CLOSE_DELIMITED;
  if (length === 0) return NO_BODY;
  if (length > 0) {
    framing.length = length;
    return framing;
  }
  return CLOSE_DELIMITED;
}

/** A 101 must answer an upgrade request and switch to a protocol it offered (step 5). */
function checkSwitch(upgrade: readonly string[], offered: readonly string[]): void {
  if (offered.length === 0) {
    throw bad('101 Switching Protocols to a request that did not ask to upgrade (RFC 9110 §7.8)');
  }
  const announced = upgradeProtocols(upgrade);
  if (announced.length === 0) throw bad('101 Switching Protocols without an Upgrade header (RFC 9110 §15.2.2)');
  for (const p of announced) {
    if (!offered.includes(p))
      throw bad(`101 switches to "${clip(p)}", which the request did not offer (RFC 9110 §7.8)`);
  }
}

/** True when the Transfer-Encoding list ends in chunked; `chunked` elsewhere is refused. */
function endsChunked(values: string[]): boolean {
  const codings = values.flatMap(splitList);
  for (let i = 0; i < codings.length; i++) {
    const coding = codings[i]!;
    if (!isToken(coding)) throw bad(`invalid Transfer-Encoding element "${clip(coding)}"`);
    if (coding.toLowerCase() === 'chunked' && i !== codings.length - 1) {
      throw bad('Transfer-Encoding chunked is not the final coding');
    }
  }
  return codings[codings.length - 1]!.toLowerCase() === 'chunked';
}
