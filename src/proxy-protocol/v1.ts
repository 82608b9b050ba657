/**
 * PROXY protocol v1 (text) receiver, haproxy `proxy-protocol.txt` §2.1.
 *
 * 1. Bytes are scanned in order; each one is checked as it arrives, so a prefix that can no
 *    longer become a header throws at once instead of waiting for the peek deadline.
 * 2. `PROXY ` must match exactly, then the protocol word must be `TCP4`, `TCP6` or `UNKNOWN`.
 * 3. Only printable ASCII may follow; the line must end in CRLF within 107 bytes (bare CR or
 *    bare LF is refused).
 * 4. With TCP4/TCP6 the line has exactly six fields separated by single spaces, addresses valid
 *    for the family, and ports 0-65535 without leading zeros. With UNKNOWN the rest of the line
 *    is ignored (the spec says so) and the real socket addresses apply.
 */
import { fail, NO_TLVS, type ProxyHeader } from './header.ts';
import { formatIpv4, formatIpv6, parseIpv4, parseIpv6 } from './ip-bytes.ts';

/** Longest v1 line including CRLF (spec §2.1; nginx `NGX_PROXY_PROTOCOL_V1_MAX_HEADER`). */
export const V1_MAX_LENGTH = 107;

const PREFIX = 'PROXY ';
const WORDS = ['TCP4', 'TCP6', 'UNKNOWN'] as const;
const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const PORT = /^(?:0|[1-9][0-9]{0,4})$/;

/** Parses a v1 header at the start of `buf`: the header, `undefined` if incomplete, or throws. */
export function parseV1(buf: Buffer): ProxyHeader | undefined {
  const lineEnd = scanLine(buf);
  if (lineEnd === undefined) return undefined;
  const line = buf.toString('latin1', 0, lineEnd);
  const fields = line.split(' ');
  const word = fields[1];
  if (word === 'UNKNOWN') {
    return { version: 1, command: 'proxy', family: 'unknown', tlvs: NO_TLVS, length: lineEnd + 2 };
  }
  const empty = fields.indexOf('');
  if (empty !== -1) fail(`v1: empty field ${empty} (double or trailing space) in ${JSON.stringify(line)}`);
  if (fields.length !== 6) fail(`v1: ${word} line has ${fields.length} fields, expected 6`);
  const v6 = word === 'TCP6';
  return {
    version: 1,
    command: 'proxy',
    family: v6 ? 'tcp6' : 'tcp4',
    source: { ip: address(fields[2]!, v6, 'source'), port: port(fields[4]!, 'source') },
    destination: { ip: address(fields[3]!, v6, 'destination'), port: port(fields[5]!, 'destination') },
    tlvs: NO_TLVS,
    length: lineEnd + 2,
  };
}

/** Returns the index of the CR of the final CRLF, `undefined` if more bytes are needed. */
function scanLine(buf: Buffer): number | undefined {
  const n = Math.min(buf.length, V1_MAX_LENGTH);
  let wordDone = false;
  for (let i = 0; i < n; i++) {
    const c = buf[i]!;
    if (i < PREFIX.length) {
      if (c !== PREFIX.charCodeAt(i)) fail(`v1: expected "PROXY " at byte ${i}, got 0x${c.toString(16)}`);
      continue;
    }
    if (c === CR) {
      if (i + 1 >= V1_MAX_LENGTH) break;
      if (i + 1 >= buf.length) return undefined;
      if (buf[i + 1] !== LF) fail(`v1: bare cr at byte ${i}`);
      if (!wordDone) checkWord(buf, i, true);
      return i;
    }
    if (c === LF) fail(`v1: bare lf at byte ${i}`);
    if (c < SP || c > 0x7e) fail(`v1: byte 0x${c.toString(16)} at ${i} is not printable ascii`);
    if (!wordDone) {
      wordDone = c === SP;
      checkWord(buf, i + (wordDone ? 0 : 1), wordDone);
    }
  }
  if (buf.length >= V1_MAX_LENGTH) fail(`v1: no crlf within ${V1_MAX_LENGTH} bytes`);
  return undefined;
}

/** Checks the protocol word read so far (bytes 6..end) is, or can still become, a known one. */
function checkWord(buf: Buffer, end: number, complete: boolean): void {
  const w = buf.toString('latin1', PREFIX.length, end);
  const ok = complete ? WORDS.some((k) => k === w) : WORDS.some((k) => k.startsWith(w));
  if (!ok) fail(`v1: unknown protocol ${JSON.stringify(w)} at byte ${PREFIX.length}`);
}

function address(s: string, v6: boolean, side: string): string {
  if (v6) {
    const b = s.includes('%') ? undefined : parseIpv6(s);
    if (b === undefined) fail(`v1: ${side} address ${JSON.stringify(s)} is not valid for TCP6`);
    return formatIpv6(b);
  }
  const b = parseIpv4(s);
  if (b === undefined) fail(`v1: ${side} address ${JSON.stringify(s)} is not valid for TCP4`);
  return formatIpv4(b);
}

function port(s: string, side: string): number {
  const v = PORT.test(s) ? Number(s) : -1;
  if (v < 0 || v > 65_535) fail(`v1: ${side} port ${JSON.stringify(s)} is not 0-65535 without leading zeros`);
  return v;
}
