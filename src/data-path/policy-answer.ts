/**
 * A `policies:` rule's answer on the wire (issue 42): the router's own words, framed for the
 * client's protocol. The answer itself (status, header lines, body) is the policy's
 * (`PolicyAnswer`, src/contracts/policy.ts); the router adds only the framing.
 *
 *   HTTP/1:  status line, the answer's headers, Content-Length, Connection, blank line, body
 *            (no body for HEAD; `keep-alive` when the connection stays usable, else `close`)
 *   h2c:     HEADERS (HPACK literals, no index, no Huffman) + DATA (END_STREAM) on the
 *            client's stream, then GOAWAY NO_ERROR naming it (the net panel's h2c splice: the
 *            connection is the first stream's, so it ends with it)
 *
 * 1. Header names and values were checked at config load (no CR, LF or NUL; the framing
 *    headers are the router's), so the bytes are built by concatenation.
 * 2. A frozen answer (a rule's fixed answer, built once per snapshot) is framed once per variant
 *    and kept; an answer made per request (a rate limit's `Retry-After`) is framed each time.
 * 3. h2c: the client's initial flow-control window is at least 65,535 bytes (RFC 9113 §6.9.2);
 *    an answer whose body is larger cannot be sent without reading WINDOW_UPDATEs, so
 *    `h2cPolicyAnswer` returns undefined for it and the caller closes with a GOAWAY instead.
 */
import { STATUS_CODES } from 'node:http';
import type { PolicyAnswer } from '../contracts/policy.ts';
import { FLAG, FRAME, FRAME_HEADER_BYTES } from '../peek/h2-frames.ts';
import { goawayFrame, H2_ERROR } from '../peek/h2c.ts';

/** The largest body an h2c answer carries: the smallest initial window a client may have. */
export const H2C_ANSWER_BODY_LIMIT = 65_535;
/** DATA frames are cut at the default SETTINGS_MAX_FRAME_SIZE. */
const MAX_FRAME = 16_384;

/** HTTP/1 framings of one frozen answer: [close, keep-alive, close HEAD, keep-alive HEAD]. */
const framed = new WeakMap<PolicyAnswer, (Buffer | undefined)[]>();

/**
 * The HTTP/1 response for `answer`. `keepAlive`: the connection stays usable after it
 * (`Connection: keep-alive`), else `Connection: close`; `head`: the request was HEAD (no body,
 * the Content-Length of the body it would have had).
 */
export function http1PolicyAnswer(answer: PolicyAnswer, keepAlive: boolean, head: boolean): Buffer {
  const variant = (keepAlive ? 1 : 0) + (head ? 2 : 0);
  const frozen = Object.isFrozen(answer);
  let variants = frozen ? framed.get(answer) : undefined;
  const kept = variants?.[variant];
  if (kept !== undefined) return kept;
  let text = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Unknown'}\r\n`;
  for (const [name, value] of answer.headers) text += `${name}: ${value}\r\n`;
  text += `Content-Length: ${answer.body.length}\r\nConnection: ${keepAlive ? 'keep-alive' : 'close'}\r\n\r\n`;
  const headBytes = Buffer.from(text, 'latin1');
  const bytes = head || answer.body.length === 0 ? headBytes : Buffer.concat([headBytes, answer.body]);
  if (frozen) {
    if (variants === undefined) {
      variants = [undefined, undefined, undefined, undefined];
      framed.set(answer, variants);
    }
    variants[variant] = bytes;
  }
  return bytes;
}

/**
 * The h2c frames answering `answer` on `streamId`, then a GOAWAY naming it; undefined when the
 * body is over `H2C_ANSWER_BODY_LIMIT` (step 3). `head`: a HEAD request, no DATA but END_STREAM
 * on the HEADERS.
 */
export function h2cPolicyAnswer(answer: PolicyAnswer, streamId: number, head: boolean): Buffer | undefined {
  const body = head ? new Uint8Array(0) : answer.body;
  if (body.length > H2C_ANSWER_BODY_LIMIT) return undefined;
  const block: Buffer[] = [indexedNameLiteral(8, String(answer.status))]; // :status is static entry 8
  for (const [name, value] of answer.headers) block.push(newNameLiteral(name.toLowerCase(), value));
  block.push(newNameLiteral('content-length', String(answer.body.length)));
  const fields = Buffer.concat(block);
  if (fields.length > MAX_FRAME) return undefined;
  const parts: Buffer[] = [
    frame(FRAME.HEADERS, FLAG.END_HEADERS | (body.length === 0 ? FLAG.END_STREAM : 0), streamId, fields),
  ];
  for (let off = 0; off < body.length; off += MAX_FRAME) {
    const end = Math.min(body.length, off + MAX_FRAME);
    parts.push(frame(FRAME.DATA, end === body.length ? FLAG.END_STREAM : 0, streamId, body.subarray(off, end)));
  }
  parts.push(goawayFrame(H2_ERROR.NO_ERROR, streamId));
  return Buffer.concat(parts);
}

/** One frame: the 9-byte header and its payload. */
function frame(type: number, flags: number, streamId: number, payload: Uint8Array): Buffer {
  const out = Buffer.alloc(FRAME_HEADER_BYTES + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId & 0x7fffffff, 5);
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

/** An HPACK integer with an `n`-bit prefix (RFC 7541 §5.1), the prefix's high bits `first`. */
function hpackInteger(value: number, n: number, first: number): number[] {
  const max = (1 << n) - 1;
  if (value < max) return [first | value];
  const out = [first | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** An HPACK string literal, raw (no Huffman). */
function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([Buffer.from(hpackInteger(bytes.length, 7, 0)), bytes]);
}

/** Literal Header Field without Indexing, indexed name (RFC 7541 §6.2.2). */
function indexedNameLiteral(index: number, value: string): Buffer {
  return Buffer.concat([Buffer.from(hpackInteger(index, 4, 0)), hpackString(value)]);
}

/** Literal Header Field without Indexing, new name. */
function newNameLiteral(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0]), hpackString(name), hpackString(value)]);
}
