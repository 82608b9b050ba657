/**
 * Outbound PROXY headers, written once as the first bytes of a fresh upstream connection.
 *
 * 1. Each address is reduced to 4 bytes (IPv4, or IPv4-mapped IPv6 as Node reports IPv4 clients
 *    on dual-stack listeners) or 16 bytes (real IPv6).
 * 2. Both sides must share one family: if both are IPv4 the header is TCP4; otherwise both are
 *    written as IPv6, IPv4 in its mapped form (spec §2: same family; nginx does the same).
 * 3. v2 TLVs: ALPN, AUTHORITY, and CRC32C last (computed over the finished header).
 * 4. Some values come from the client (AUTHORITY is its SNI or Host, ALPN its offer), so the
 *    `try…` encoders never throw: a value that cannot be sent comes back as an `EncodeRefusal`
 *    and the caller refuses the request. Limits: a TLV value and the whole v2 header have 16-bit
 *    lengths (spec §2.2); AUTHORITY is a host name, at most 255 bytes (HAProxy drops a header
 *    whose AUTHORITY is longer, `HA_PP2_AUTHORITY_MAX`); an ALPN id is at most 255 bytes
 *    (RFC 7301 §3.1); a v1 line is at most 107 bytes (spec §2.1).
 * 5. `encodeProxyV1` / `encodeProxyV2` throw `SWB_ERR_PROXY_HEADER` instead: for values the
 *    caller controls (health checks, tests).
 */
import { crc32c } from './crc32c.ts';
import { fail, type ProxyEndpoint } from './header.ts';
import { addressBytes, formatIpv4, formatIpv6, toV6 } from './ip-bytes.ts';
import { V1_MAX_LENGTH } from './v1.ts';
import { PP2_TYPE, V2_SIGNATURE } from './v2.ts';

/** Longest AUTHORITY value sent: a host name (RFC 1035 §2.3.4; HAProxy's receiver limit). */
export const V2_AUTHORITY_MAX_BYTES = 255;
/** Longest ALPN value sent: one protocol id (RFC 7301 §3.1). */
export const V2_ALPN_MAX_BYTES = 255;
/** Largest TLV value, and largest header after the 16 fixed bytes: 16-bit lengths (spec §2.2). */
export const V2_MAX_LENGTH = 65_535;

/**
 * Why a header could not be built: `too_long` (a value or the header exceeds a length the
 * format or receivers allow) or `bad_address` (an endpoint is not an ip address and port).
 */
export interface EncodeRefusal {
  readonly refused: 'too_long' | 'bad_address';
  readonly reason: string;
}

/** True when `x` is an EncodeRefusal rather than header bytes. */
export function isEncodeRefusal(x: Buffer | EncodeRefusal): x is EncodeRefusal {
  return !Buffer.isBuffer(x);
}

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

function endpointBytes(e: ProxyEndpoint, side: string, what: string): Uint8Array | EncodeRefusal {
  if (!Number.isInteger(e.port) || e.port < 0 || e.port > 65_535)
    return { refused: 'bad_address', reason: `${what}: ${side} port ${e.port} is not 0-65535` };
  const b = addressBytes(e.ip);
  if (b === undefined)
    return { refused: 'bad_address', reason: `${what}: ${side} address ${JSON.stringify(e.ip)} is not an ip address` };
  return b;
}

function pair(source: ProxyEndpoint, destination: ProxyEndpoint, what: string): Pair | EncodeRefusal {
  let src = endpointBytes(source, 'source', what);
  if (!(src instanceof Uint8Array)) return src;
  let dst = endpointBytes(destination, 'destination', what);
  if (!(dst instanceof Uint8Array)) return dst;
  if (src.length !== dst.length) {
    src = toV6(src);
    dst = toV6(dst);
  }
  return { src, dst, sport: source.port, dport: destination.port };
}

function orThrow(x: Buffer | EncodeRefusal): Buffer {
  if (isEncodeRefusal(x)) fail(x.reason);
  return x;
}

/** Builds a v1 text header; `'unknown'` gives `PROXY UNKNOWN\r\n` (use sparingly, spec §2.1). Never throws. */
export function tryEncodeProxyV1(
  arg: { source: ProxyEndpoint; destination: ProxyEndpoint } | 'unknown',
): Buffer | EncodeRefusal {
  if (arg === 'unknown') return Buffer.from('PROXY UNKNOWN\r\n', 'latin1');
  const p = pair(arg.source, arg.destination, 'encode v1');
  if ('refused' in p) return p;
  const v4 = p.src.length === 4;
  const fmt = v4 ? formatIpv4 : formatIpv6;
  const line = `PROXY ${v4 ? 'TCP4' : 'TCP6'} ${fmt(p.src)} ${fmt(p.dst)} ${p.sport} ${p.dport}\r\n`;
  // Canonical text of valid addresses is at most 104 bytes; checked so no caller can exceed it.
  if (line.length > V1_MAX_LENGTH)
    return { refused: 'too_long', reason: `encode v1: line of ${line.length} bytes exceeds ${V1_MAX_LENGTH}` };
  return Buffer.from(line, 'latin1');
}

/** `tryEncodeProxyV1`, throwing `SWB_ERR_PROXY_HEADER` on a refusal (caller-controlled values). */
export function encodeProxyV1(arg: { source: ProxyEndpoint; destination: ProxyEndpoint } | 'unknown'): Buffer {
  return orThrow(tryEncodeProxyV1(arg));
}

function tlv(type: number, value: Buffer): Buffer {
  const h = Buffer.allocUnsafe(3);
  h[0] = type;
  h.writeUInt16BE(value.length, 1);
  return Buffer.concat([h, value]);
}

/** A refusal when `value` is longer than `max` (and than the 16-bit TLV length). */
function tooLong(name: string, value: Buffer, max: number): EncodeRefusal | undefined {
  if (value.length <= max && value.length <= V2_MAX_LENGTH) return undefined;
  return { refused: 'too_long', reason: `encode v2: ${name} of ${value.length} bytes exceeds ${max}` };
}

function addressBlock(o: ProxyV2Options): { fam: number; block: Buffer } | EncodeRefusal {
  if (o.command === 'local' || (o.source === undefined && o.destination === undefined)) {
    return { fam: 0x00, block: Buffer.alloc(0) };
  }
  if (o.source === undefined || o.destination === undefined)
    return { refused: 'bad_address', reason: 'encode v2: source and destination go together' };
  const p = pair(o.source, o.destination, 'encode v2');
  if ('refused' in p) return p;
  const ipLen = p.src.length;
  const block = Buffer.alloc(2 * ipLen + 4);
  block.set(p.src, 0);
  block.set(p.dst, ipLen);
  block.writeUInt16BE(p.sport, 2 * ipLen);
  block.writeUInt16BE(p.dport, 2 * ipLen + 2);
  return { fam: ipLen === 4 ? 0x11 : 0x21, block };
}

/** Builds a v2 binary header with optional AUTHORITY, ALPN and CRC32C TLVs. Never throws. */
export function tryEncodeProxyV2(o: ProxyV2Options): Buffer | EncodeRefusal {
  const addresses = addressBlock(o);
  if ('refused' in addresses) return addresses;
  const { fam, block } = addresses;
  const parts: Buffer[] = [V2_SIGNATURE, Buffer.from([o.command === 'local' ? 0x20 : 0x21, fam, 0, 0]), block];
  if (o.alpn !== undefined) {
    const value = Buffer.from(o.alpn, 'latin1');
    const refusal = tooLong('alpn', value, V2_ALPN_MAX_BYTES);
    if (refusal !== undefined) return refusal;
    parts.push(tlv(PP2_TYPE.ALPN, value));
  }
  if (o.authority !== undefined) {
    const value = Buffer.from(o.authority, 'utf8');
    const refusal = tooLong('authority', value, V2_AUTHORITY_MAX_BYTES);
    if (refusal !== undefined) return refusal;
    parts.push(tlv(PP2_TYPE.AUTHORITY, value));
  }
  if (o.crc32c) parts.push(tlv(PP2_TYPE.CRC32C, Buffer.alloc(4)));
  const out = Buffer.concat(parts);
  // Unreachable with the limits above (at most 36 + 258 + 258 + 7 bytes); kept for new TLVs.
  if (out.length - 16 > V2_MAX_LENGTH)
    return { refused: 'too_long', reason: `encode v2: header of ${out.length} bytes exceeds the 16-bit length` };
  out.writeUInt16BE(out.length - 16, 14);
  // Computed last, over the finished header with the CRC field still zero (spec §2.2.5).
  if (o.crc32c) out.writeUInt32BE(crc32c(out), out.length - 4);
  return out;
}

/** `tryEncodeProxyV2`, throwing `SWB_ERR_PROXY_HEADER` on a refusal (caller-controlled values). */
export function encodeProxyV2(o: ProxyV2Options): Buffer {
  return orThrow(tryEncodeProxyV2(o));
}

/** The 16-byte v2 LOCAL header, for health checks and connections the proxy makes itself. */
export function encodeProxyV2Local(): Buffer {
  return encodeProxyV2({ command: 'local' });
}
