/**
 * Entry point for inbound PROXY headers: picks v1 or v2 from the first byte and refuses
 * anything else immediately (the spec says never guess whether a header is present).
 */
import { fail, type ProxyAccept, type ProxyHeader } from './header.ts';
import { parseV1 } from './v1.ts';
import { parseV2, V2_DEFAULT_MAX_BYTES } from './v2.ts';

const P = 0x50;
const CR = 0x0d;

/**
 * Parses the PROXY header at the start of `buf`: the header (strip `length` bytes), `undefined`
 * when more bytes are needed, or `SWB_ERR_PROXY_HEADER` when the bytes cannot be one that
 * `accept` allows. `maxV2Bytes` caps a v2 header (v1 is always at most 107 bytes).
 */
export function parseProxyHeader(
  buf: Buffer,
  accept: ProxyAccept,
  maxV2Bytes: number = V2_DEFAULT_MAX_BYTES,
): ProxyHeader | undefined {
  if (buf.length === 0) return undefined;
  const first = buf[0]!;
  if (first === P && accept !== 'v2') return parseV1(buf);
  if (first === CR && accept !== 'v1') return parseV2(buf, maxV2Bytes);
  const want = accept === 'any' ? 'a v1 or v2' : `a ${accept}`;
  return fail(`first byte 0x${first.toString(16).padStart(2, '0')} cannot start ${want} header`);
}
