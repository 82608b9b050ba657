/**
 * The HTTP/1 response-head peek, for per-request routing: where does this response end?
 *
 * 1. `Http1ResponseScanner.feed(buf, requestMethod, upgradeTo)` finds the head like the request peek
 *    (HeadScanner: bare CR/LF refused, at most one leading CRLF, `maxHeaderBytes` → 431).
 * 2. The status line must be `HTTP/1.0|1.1 SP 3DIGIT [SP reason]`; field lines follow the same
 *    strict rules as requests, and llhttp must accept the head and agree on status and fields.
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

import { peerError } from '../errors.ts';
import {
  type BodyFraming,
  CHUNKED,
  clip,
  connectionTokens,
  type HeaderPair,
  isToken,
  NO_BODY,
  parseContentLength,
  parseFieldLine,
  splitList,
  upgradeProtocols,
} from './http1-fields.ts';
import { HeadScanner } from './http1-scan.ts';
import { llhttpHead } from './llhttp.ts';

const WHO = 'http1 response';
const NONE: readonly string[] = Object.freeze([]);

/** A validated HTTP/1 response head. */
export interface Http1ResponseHead {
  readonly status: number;
  readonly versionMinor: 0 | 1;
  readonly headers: readonly HeaderPair[];
  /** Bytes from the buffer start through the final CRLFCRLF. */
  readonly headLength: number;
  readonly bodyFraming: BodyFraming;
  /** `Connection: close`, or HTTP/1.0 without `keep-alive`: the server will close after it. */
  readonly connectionClose: boolean;
}

/** Incremental response-head peek; `reset()` before the next response. */
export class Http1ResponseScanner {
  readonly #scanner: HeadScanner;

  constructor(maxHeaderBytes: number) {
    this.#scanner = new HeadScanner('response', maxHeaderBytes);
  }

  /**
   * Feeds the accumulated buffer; undefined means "need more bytes". `upgradeTo` is what the
   * request offered to switch to (Http1Head.upgradeTo; empty: it did not ask to upgrade).
   */
  feed(buf: Buffer, requestMethod: string, upgradeTo: readonly string[] = NONE): Http1ResponseHead | undefined {
    const end = this.#scanner.scan(buf);
    if (end === -1) return undefined;
    return parseResponse(buf, this.#scanner.start, this.#scanner.startLineEnd, end, {
      method: requestMethod,
      upgradeTo,
    });
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

/** What the response answers: the request's method and the protocols it offered in Upgrade. */
interface Asked {
  readonly method: string;
  readonly upgradeTo: readonly string[];
}

function bad(what: string): Error {
  return peerError('bad_request', `${WHO}: ${what}`);
}

const STATUS_LINE = /^HTTP\/1\.([01]) ([0-9]{3})(?: .*)?$/s;

function parseResponse(buf: Buffer, start: number, lineEnd: number, end: number, asked: Asked): Http1ResponseHead {
  const m = STATUS_LINE.exec(buf.toString('latin1', start, lineEnd));
  if (m === null) throw bad('status line is not "HTTP/1.x nnn reason"');
  const versionMinor = m[1] === '1' ? 1 : 0;
  const status = Number(m[2]);
  if (status < 100) throw bad(`status ${status} out of range`);
  const headers: HeaderPair[] = [];
  const at = lineEnd + 2;
  if (at < end - 2) {
    const text = buf.toString('latin1', at, end - 4);
    let from = 0;
    for (let n = 1; from <= text.length; n++) {
      let to = text.indexOf('\r\n', from);
      if (to === -1) to = text.length;
      headers.push(parseFieldLine(text.slice(from, to), n, at + from, WHO));
      from = to + 2;
    }
  }
  const r = llhttpHead('RESPONSE', buf.subarray(start, end));
  if (!r.ok) throw bad(`llhttp: ${r.reason}`);
  if (r.status !== status || r.versionMinor !== versionMinor || r.fields !== headers.length) {
    throw bad('parser disagreement on the response head');
  }
  const connection: string[] = [];
  const te: string[] = [];
  const cl: string[] = [];
  const upgrade: string[] = [];
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (lower === 'connection') connection.push(value);
    else if (lower === 'transfer-encoding') te.push(value);
    else if (lower === 'content-length') cl.push(value);
    else if (lower === 'upgrade') upgrade.push(value);
  }
  if (status === 101) checkSwitch(upgrade, asked.upgradeTo);
  const tokens = connectionTokens(connection);
  return {
    status,
    versionMinor,
    headers,
    headLength: end,
    bodyFraming: responseFraming(status, versionMinor, asked.method, te, cl),
    connectionClose: tokens.has('close') || (versionMinor === 0 && !tokens.has('keep-alive')),
  };
}

/** RFC 9112 §6.3 in order; see the header comment, steps 3–4. */
function responseFraming(status: number, versionMinor: 0 | 1, method: string, te: string[], cl: string[]): BodyFraming {
  if (status === 101 || (method === 'CONNECT' && status >= 200 && status < 300)) return { kind: 'tunnel' };
  if (te.length > 0 && cl.length > 0) throw bad('both Transfer-Encoding and Content-Length');
  if (te.length > 0 && versionMinor === 0) throw bad('Transfer-Encoding in an HTTP/1.0 response');
  // Framing headers are validated even where they do not apply, so a bad one always fails.
  const length = cl.length > 0 ? parseContentLength(cl, WHO) : -1;
  const chunked = te.length > 0 ? endsChunked(te) : false;
  if (method === 'HEAD' || status < 200 || status === 204 || status === 304) return NO_BODY;
  if (te.length > 0) return chunked ? CHUNKED : { kind: 'close' };
  if (length === 0) return NO_BODY;
  if (length > 0) return { kind: 'length', length };
  return { kind: 'close' };
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
