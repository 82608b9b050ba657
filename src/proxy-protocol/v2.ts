/**
 * PROXY protocol v2 (binary) receiver, haproxy `proxy-protocol.txt` §2.2.
 *
 * 1. The 12-byte signature is compared byte by byte as it arrives; a mismatch throws at once.
 * 2. Byte 12: version nibble must be 2, command LOCAL (0) or PROXY (1).
 * 3. Byte 13 (PROXY only): family/transport must be one of 00 11 12 21 22 31 32.
 * 4. Bytes 14-15: `len`; the header is exactly 16 + len bytes, capped by `maxBytes`, and must be
 *    long enough for the family's address block. Nothing past 16 + len is ever read.
 * 5. LOCAL: the whole block is skipped (addresses and TLVs ignored, as the spec requires).
 * 6. PROXY: addresses, then TLVs that must end exactly at 16 + len; CRC32C, when present, is
 *    checked over the whole header with its own value zeroed.
 */
import { crc32c } from './crc32c.ts';
import { fail, NO_TLVS, type ProxyFamily, type ProxyHeader } from './header.ts';
import { formatIpv4, formatIpv6 } from './ip-bytes.ts';

/** The v2 signature (spec §2.2); it contains a NUL, so it is never a C string. */
export const V2_SIGNATURE: Buffer = Buffer.from([
  0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
]);

/** Default cap on a v2 header (nginx `NGX_PROXY_PROTOCOL_MAX_HEADER`). */
export const V2_DEFAULT_MAX_BYTES = 4096;

/** Registered TLV types (spec §2.2.1-2.2.7). */
export const PP2_TYPE = {
  ALPN: 0x01,
  AUTHORITY: 0x02,
  CRC32C: 0x03,
  NOOP: 0x04,
  UNIQUE_ID: 0x05,
  SSL: 0x20,
  NETNS: 0x30,
} as const;

interface FamilyInfo {
  family: ProxyFamily;
  addrLen: number;
  ipLen: 0 | 4 | 16;
}

const FAMILIES: ReadonlyMap<number, FamilyInfo> = new Map<number, FamilyInfo>([
  [0x00, { family: 'unknown', addrLen: 0, ipLen: 0 }],
  [0x11, { family: 'tcp4', addrLen: 12, ipLen: 4 }],
  [0x12, { family: 'udp4', addrLen: 12, ipLen: 4 }],
  [0x21, { family: 'tcp6', addrLen: 36, ipLen: 16 }],
  [0x22, { family: 'udp6', addrLen: 36, ipLen: 16 }],
  [0x31, { family: 'unix', addrLen: 216, ipLen: 0 }],
  [0x32, { family: 'unix', addrLen: 216, ipLen: 0 }],
]);

/** Parses a v2 header at the start of `buf`: the header, `undefined` if incomplete, or throws. */
export function parseV2(buf: Buffer, maxBytes: number = V2_DEFAULT_MAX_BYTES): ProxyHeader | undefined {
  const n = buf.length;
  for (let i = 0; i < 12 && i < n; i++) {
    if (buf[i] !== V2_SIGNATURE[i]) fail(`v2: signature mismatch at byte ${i}`);
  }
  if (n < 13) return undefined;
  const verCmd = buf[12]!;
  if (verCmd >> 4 !== 2) fail(`v2: version ${verCmd >> 4} at byte 12 is not 2`);
  const command = verCmd & 0x0f;
  if (command > 1) fail(`v2: command ${command} at byte 12 is neither local nor proxy`);
  if (n < 14) return undefined;
  const famByte = buf[13]!;
  const info = command === 1 ? FAMILIES.get(famByte) : undefined;
  if (command === 1 && info === undefined) fail(`v2: family/transport 0x${famByte.toString(16)} at byte 13`);
  if (n < 16) return undefined;
  const len = buf.readUInt16BE(14);
  const total = 16 + len;
  if (total > maxBytes) fail(`v2: header of ${total} bytes exceeds ${maxBytes}`);
  if (info && len < info.addrLen) fail(`v2: length ${len} is shorter than the ${info.family} address block`);
  if (n < total) return undefined;
  if (info === undefined) return { version: 2, command: 'local', family: 'unknown', tlvs: NO_TLVS, length: total };
  const header: ProxyHeader = { version: 2, command: 'proxy', family: info.family, tlvs: NO_TLVS, length: total };
  if (info.ipLen !== 0) {
    const fmt = info.ipLen === 4 ? formatIpv4 : formatIpv6;
    header.source = { ip: fmt(buf, 16), port: buf.readUInt16BE(16 + 2 * info.ipLen) };
    header.destination = { ip: fmt(buf, 16 + info.ipLen), port: buf.readUInt16BE(18 + 2 * info.ipLen) };
  }
  if (16 + info.addrLen < total) readTlvs(buf, 16 + info.addrLen, total, header);
  return header;
}

/** Reads TLVs in `[pos, end)` into `header`; each must fit, and together they fill the block. */
function readTlvs(buf: Buffer, pos: number, end: number, header: ProxyHeader): void {
  const tlvs = new Map<number, Buffer>();
  while (pos < end) {
    if (pos + 3 > end) fail(`v2: tlv header at byte ${pos} overruns header end at byte ${end}`);
    const type = buf[pos]!;
    const vlen = buf.readUInt16BE(pos + 1);
    const start = pos + 3;
    if (start + vlen > end) {
      fail(`v2: tlv 0x${type.toString(16)} length ${vlen} at byte ${pos} overruns header end at byte ${end}`);
    }
    if (type !== PP2_TYPE.NOOP) {
      // One value per type: a map cannot hold two, and picking one invites disagreement.
      if (tlvs.has(type)) fail(`v2: duplicate tlv 0x${type.toString(16)} at byte ${pos}`);
      checkTlv(buf, type, start, vlen, end);
      tlvs.set(type, Buffer.from(buf.subarray(start, start + vlen)));
    }
    pos = start + vlen;
  }
  header.tlvs = tlvs;
  const authority = tlvs.get(PP2_TYPE.AUTHORITY);
  if (authority) header.authority = authority.toString('utf8');
  const alpn = tlvs.get(PP2_TYPE.ALPN);
  if (alpn) header.alpn = alpn.toString('latin1');
}

function checkTlv(buf: Buffer, type: number, start: number, vlen: number, end: number): void {
  if (type === PP2_TYPE.CRC32C) {
    if (vlen !== 4) fail(`v2: crc32c tlv at byte ${start - 3} has length ${vlen}, expected 4`);
    // The CRC covers the whole header with its own 4 bytes taken as zero.
    let crc = crc32c(buf, 0, 0, start);
    crc = crc32c(ZERO4, crc);
    crc = crc32c(buf, crc, start + 4, end);
    const sent = buf.readUInt32BE(start);
    if (crc !== sent) fail(`v2: crc32c mismatch (header says 0x${hex8(sent)}, computed 0x${hex8(crc)})`);
  } else if (type === PP2_TYPE.UNIQUE_ID && vlen > 128) {
    fail(`v2: unique_id tlv at byte ${start - 3} is ${vlen} bytes, over 128`);
  } else if (type === PP2_TYPE.SSL) {
    checkSslTlv(buf, start, start + vlen);
  }
}

const ZERO4 = new Uint8Array(4);

function hex8(v: number): string {
  return v.toString(16).padStart(8, '0');
}

/** PP2_TYPE_SSL: client(1) verify(4) then sub-TLVs that must fill the value exactly. */
function checkSslTlv(buf: Buffer, start: number, end: number): void {
  if (end - start < 5) fail(`v2: ssl tlv at byte ${start - 3} is shorter than 5 bytes`);
  let pos = start + 5;
  while (pos < end) {
    if (pos + 3 > end) fail(`v2: ssl sub-tlv header at byte ${pos} overruns ssl tlv end at byte ${end}`);
    const next = pos + 3 + buf.readUInt16BE(pos + 1);
    if (next > end) fail(`v2: ssl sub-tlv 0x${buf[pos]!.toString(16)} at byte ${pos} overruns ssl tlv end`);
    pos = next;
  }
}
