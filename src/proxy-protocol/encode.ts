/**
 * Outbound PROXY headers, written once as the first bytes of a fresh upstream connection.
 *
 * 1. Each address is reduced to 4 bytes (IPv4, or IPv4-mapped IPv6 as Node reports IPv4 clients
 *    on dual-stack listeners) or 16 bytes (real IPv6).
 * 2. Both sides must share one family: if both are IPv4 the header is TCP4; otherwise both are
 *    written as IPv6, IPv4 in its mapped form (spec §2: same family; nginx does the same).
 * 3. v2 TLVs: ALPN, AUTHORITY, and CRC32C last (computed over the finished header).
 */
import { crc32c } from './crc32c.ts';
import { fail, type ProxyEndpoint } from './header.ts';
import { addressBytes, formatIpv4, formatIpv6, toV6 } from './ip-bytes.ts';
import { PP2_TYPE, V2_SIGNATURE } from './v2.ts';

/** Options for `encodeProxyV2`; without both endpoints a PROXY command is sent as UNSPEC. */
export interface ProxyV2Options {
  command: 'proxy' | 'local';
  source?: ProxyEndpoint;
  destination?: ProxyEndpoint;
  /** PP2_TYPE_AUTHORITY, usually the client's SNI. */
  authority?: string;
  /** PP2_TYPE_ALPN, the negotiated or offered protocol id. */
  alpn?: string;
  /** Append a PP2_TYPE_CRC32C TLV. */
  crc32c?: boolean;
}

interface Pair {
  src: Uint8Array;
  dst: Uint8Array;
  sport: number;
  dport: number;
}

function endpointBytes(e: ProxyEndpoint, side: string, what: string): Uint8Array {
  if (!Number.isInteger(e.port) || e.port < 0 || e.port > 65_535)
    fail(`${what}: ${side} port ${e.port} is not 0-65535`);
  const b = addressBytes(e.ip);
  if (b === undefined) fail(`${what}: ${side} address ${JSON.stringify(e.ip)} is not an ip address`);
  return b;
}

function pair(source: ProxyEndpoint, destination: ProxyEndpoint, what: string): Pair {
  let src = endpointBytes(source, 'source', what);
  let dst = endpointBytes(destination, 'destination', what);
  if (src.length !== dst.length) {
    src = toV6(src);
    dst = toV6(dst);
  }
  return { src, dst, sport: source.port, dport: destination.port };
}

/** Builds a v1 text header; `'unknown'` gives `PROXY UNKNOWN\r\n` (use sparingly, spec §2.1). */
export function encodeProxyV1(arg: { source: ProxyEndpoint; destination: ProxyEndpoint } | 'unknown'): Buffer {
  if (arg === 'unknown') return Buffer.from('PROXY UNKNOWN\r\n', 'latin1');
  const p = pair(arg.source, arg.destination, 'encode v1');
  const v4 = p.src.length === 4;
  const fmt = v4 ? formatIpv4 : formatIpv6;
  const line = `PROXY ${v4 ? 'TCP4' : 'TCP6'} ${fmt(p.src)} ${fmt(p.dst)} ${p.sport} ${p.dport}\r\n`;
  return Buffer.from(line, 'latin1');
}

function tlv(type: number, value: Buffer): Buffer {
  if (value.length > 65_535) fail(`encode v2: tlv 0x${type.toString(16)} of ${value.length} bytes is too long`);
  const h = Buffer.allocUnsafe(3);
  h[0] = type;
  h.writeUInt16BE(value.length, 1);
  return Buffer.concat([h, value]);
}

function addressBlock(o: ProxyV2Options): { fam: number; block: Buffer } {
  if (o.command === 'local' || (o.source === undefined && o.destination === undefined)) {
    return { fam: 0x00, block: Buffer.alloc(0) };
  }
  if (o.source === undefined || o.destination === undefined) fail('encode v2: source and destination go together');
  const p = pair(o.source, o.destination, 'encode v2');
  const ipLen = p.src.length;
  const block = Buffer.alloc(2 * ipLen + 4);
  block.set(p.src, 0);
  block.set(p.dst, ipLen);
  block.writeUInt16BE(p.sport, 2 * ipLen);
  block.writeUInt16BE(p.dport, 2 * ipLen + 2);
  return { fam: ipLen === 4 ? 0x11 : 0x21, block };
}

/** Builds a v2 binary header with optional AUTHORITY, ALPN and CRC32C TLVs. */
export function encodeProxyV2(o: ProxyV2Options): Buffer {
  const { fam, block } = addressBlock(o);
  const parts: Buffer[] = [V2_SIGNATURE, Buffer.from([o.command === 'local' ? 0x20 : 0x21, fam, 0, 0]), block];
  if (o.alpn !== undefined) parts.push(tlv(PP2_TYPE.ALPN, Buffer.from(o.alpn, 'latin1')));
  if (o.authority !== undefined) parts.push(tlv(PP2_TYPE.AUTHORITY, Buffer.from(o.authority, 'utf8')));
  if (o.crc32c) parts.push(tlv(PP2_TYPE.CRC32C, Buffer.alloc(4)));
  const out = Buffer.concat(parts);
  if (out.length - 16 > 65_535) fail(`encode v2: header of ${out.length} bytes exceeds the 16-bit length`);
  out.writeUInt16BE(out.length - 16, 14);
  // Computed last, over the finished header with the CRC field still zero (spec §2.2.5).
  if (o.crc32c) out.writeUInt32BE(crc32c(out), out.length - 4);
  return out;
}

/** The 16-byte v2 LOCAL header, for health checks and connections the proxy makes itself. */
export function encodeProxyV2Local(): Buffer {
  return encodeProxyV2({ command: 'local' });
}
