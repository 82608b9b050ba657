/**
 * The HTTP/1.1 upgrade to cleartext HTTP/2 (`Upgrade: h2c`, RFC 7540 §3.2), accepted on an
 * `h2c: route` listener only (everywhere else the peek refuses it, http1-fields.ts):
 *
 * 1. `checkH2cUpgrade` (called by the head parse when the listener accepts it): HTTP/1.1,
 *    `Connection` naming `upgrade` and `http2-settings`, exactly one `HTTP2-Settings` of valid
 *    base64url whose payload is whole settings (6 bytes each), no request body, not CONNECT.
 *    Anything else is the 400 it was before, with the reason.
 * 2. `upgradeHeadersFrames` turns the request into what node's http2 server expects after the
 *    client's preface and SETTINGS: a HEADERS frame for stream 1 with END_STREAM (and
 *    CONTINUATION frames past 16,384 bytes). Every field is an HPACK "literal without indexing,
 *    new name" with raw strings (RFC 7541 §6.2.2), so the server's decoder table stays empty
 *    and the client's own HPACK context (which has sent nothing yet) stays in step.
 */
import { peerError } from '../base/errors.ts';
import { FLAG, FRAME, FRAME_HEADER_BYTES, INITIAL_MAX_FRAME_SIZE } from './h2-frames.ts';
import type { Http1Head } from './http1-types.ts';

/** The answer that switches the connection (RFC 7540 §3.2). */
export const SWITCHING_TO_H2C = Buffer.from(
  'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n',
  'latin1',
);

/** Fields that do not cross into HTTP/2 (RFC 9113 §8.2.2), Host becoming `:authority`. */
const DROPPED = new Set([
  'connection',
  'upgrade',
  'http2-settings',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'host',
]);

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function bad(what: string): Error {
  return peerError('bad_request', `http1: Upgrade: h2c ${what}`);
}

/** Whether a head the peek accepted asks to switch to h2c (only an `h2c: route` peek lets one through). */
export function isH2cUpgrade(head: Http1Head): boolean {
  return head.upgrade && head.upgradeTo.includes('h2c');
}

/** Throws the 400 for an `Upgrade: h2c` request the router will not switch (step 1). */
export function checkH2cUpgrade(head: Http1Head, connection: ReadonlySet<string>): void {
  if (head.versionMinor !== 1) throw bad('needs HTTP/1.1');
  if (!connection.has('upgrade') || !connection.has('http2-settings')) {
    throw bad('needs Connection: Upgrade, HTTP2-Settings');
  }
  if (head.method === 'CONNECT') throw bad('on a CONNECT request');
  if (head.bodyFraming.kind !== 'none') {
    throw bad('with a request body is refused (send the request after the switch, or use prior knowledge)');
  }
  let settings: string | undefined;
  let count = 0;
  for (const [name, value] of head.headers) {
    if (name.length === 14 && name.toLowerCase() === 'http2-settings') {
      settings = value;
      count++;
    }
  }
  if (count !== 1) throw bad(`needs exactly one HTTP2-Settings field (${count})`);
  const s = settings!;
  // base64url without padding (RFC 7540 §3.2.1); the payload is a list of 6-byte settings.
  if (!BASE64URL.test(s) || s.length % 4 === 1 || Math.floor((s.length * 3) / 4) % 6 !== 0) {
    throw bad('HTTP2-Settings is not base64url of a SETTINGS payload');
  }
}

/** An HPACK integer with an `n`-bit prefix (RFC 7541 §5.1), the prefix bits zero. */
function integer(out: number[], value: number, n: number): void {
  const max = (1 << n) - 1;
  if (value < max) {
    out.push(value);
    return;
  }
  out.push(max);
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

/** A raw (not Huffman) string literal. */
function literal(out: number[], s: string): void {
  integer(out, s.length, 7);
  for (let i = 0; i < s.length; i++) out.push(s.charCodeAt(i) & 0xff);
}

/** The header block of the upgraded request, every field a literal without indexing (new name). */
export function upgradeHeaderBlock(head: Http1Head): Buffer {
  const out: number[] = [];
  const field = (name: string, value: string) => {
    out.push(0x00);
    literal(out, name);
    literal(out, value);
  };
  let authority = '';
  for (const [name, value] of head.headers) if (name.toLowerCase() === 'host') authority = value;
  field(':method', head.method);
  field(':scheme', 'http');
  field(':path', head.target);
  if (authority !== '') field(':authority', authority);
  for (const [name, value] of head.headers) {
    const lower = name.toLowerCase();
    if (DROPPED.has(lower)) continue;
    // TE is the one connection field HTTP/2 keeps, and only as `trailers` (RFC 9113 §8.2.2).
    if (lower === 'te' && value.toLowerCase() !== 'trailers') continue;
    field(lower, value);
  }
  return Buffer.from(out);
}

function frameHeader(out: Buffer, at: number, length: number, type: number, flags: number, stream: number): void {
  out.writeUIntBE(length, at, 3);
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(stream, at + 5);
}

/**
 * Stream 1 of the upgraded connection: HEADERS (END_STREAM) and, when the block is larger than
 * the initial maximum frame size, CONTINUATION frames; END_HEADERS on the last.
 */
export function upgradeHeadersFrames(head: Http1Head): Buffer {
  const block = upgradeHeaderBlock(head);
  const frames = Math.max(1, Math.ceil(block.length / INITIAL_MAX_FRAME_SIZE));
  const out = Buffer.alloc(block.length + frames * FRAME_HEADER_BYTES);
  let at = 0;
  for (let i = 0; i < frames; i++) {
    const from = i * INITIAL_MAX_FRAME_SIZE;
    const length = Math.min(INITIAL_MAX_FRAME_SIZE, block.length - from);
    const last = i === frames - 1;
    const type = i === 0 ? FRAME.HEADERS : FRAME.CONTINUATION;
    const flags = (i === 0 ? FLAG.END_STREAM : 0) | (last ? FLAG.END_HEADERS : 0);
    frameHeader(out, at, length, type, flags, 1);
    block.copy(out, at + FRAME_HEADER_BYTES, from, from + length);
    at += FRAME_HEADER_BYTES + length;
  }
  return out;
}
