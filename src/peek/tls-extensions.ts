/**
 * ClientHello body parsing (RFC 8446 §4.1.2, RFC 5246 §7.4.1.2): every vector length is checked
 * against the vector that encloses it, so a lying length can never make us read a neighbour's
 * bytes. Offsets in error messages count from the first byte of the handshake message (its
 * 4-byte header included), which is what a hex dump of the reassembled message shows.
 */
import { SwitchboardError } from '../base/errors.ts';

/** The parts of a ClientHello body that routing uses. */
export interface HelloFields {
  sni: string | undefined;
  alpn: readonly string[];
  legacyVersion: number;
  supportedVersions: readonly number[];
}

const EXT_SERVER_NAME = 0x0000;
const EXT_ALPN = 0x0010;
const EXT_SUPPORTED_VERSIONS = 0x002b;
const EXT_PRE_SHARED_KEY = 0x0029;
const MAX_DNS_NAME = 253;

function fail(msg: string): never {
  throw new SwitchboardError('SWB_ERR_TLS_HELLO', `tls: ${msg}`);
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(4, '0')}`;
}

/** RFC 8701 GREASE code points look like 0x?A?A with both bytes equal. */
export function isGrease(v: number): boolean {
  return (v & 0x0f0f) === 0x0a0a && v >> 8 === (v & 0xff);
}

/**
 * Reads one length-prefixed vector at `pos` whose length field has `width` bytes, and checks
 * that it ends inside `[pos, limit)`. Returns the end of the vector.
 */
function vectorEnd(b: Buffer, pos: number, width: 1 | 2, limit: number, what: string, base: number): number {
  if (pos + width > limit) fail(`${what} length field overruns its parent at byte ${pos + base}`);
  const len = width === 1 ? b[pos]! : b.readUInt16BE(pos);
  const end = pos + width + len;
  if (end > limit) fail(`${what} length ${len} overruns its parent at byte ${pos + base}`);
  return end;
}

/** Parses a ClientHello body (after the 4-byte handshake header); `base` is the body's offset. */
export function parseHelloBody(b: Buffer, base = 4): HelloFields {
  const end = b.length;
  if (end < 34) fail(`clienthello body of ${end} bytes is shorter than version and random`);
  const legacyVersion = b.readUInt16BE(0);
  if (legacyVersion >> 8 !== 3) fail(`clienthello legacy_version ${hex(legacyVersion)} is not 3.x at byte ${base}`);
  let pos = 34;
  const sidEnd = vectorEnd(b, pos, 1, end, 'session_id', base);
  if (sidEnd - pos - 1 > 32) fail(`session_id length ${sidEnd - pos - 1} exceeds 32 at byte ${pos + base}`);
  pos = sidEnd;
  const csEnd = vectorEnd(b, pos, 2, end, 'cipher_suites', base);
  const csLen = csEnd - pos - 2;
  if (csLen < 2 || csLen % 2 !== 0)
    fail(`cipher_suites length ${csLen} is not a non-empty even number at byte ${pos + base}`);
  pos = csEnd;
  const cmEnd = vectorEnd(b, pos, 1, end, 'compression_methods', base);
  if (cmEnd - pos - 1 < 1) fail(`compression_methods is empty at byte ${pos + base}`);
  pos = cmEnd;
  const fields: HelloFields = { sni: undefined, alpn: [], legacyVersion, supportedVersions: [] };
  // A TLS 1.0-1.2 hello may stop here (RFC 5246 §7.4.1.2: extensions are optional).
  if (pos === end) return fields;
  const extEnd = vectorEnd(b, pos, 2, end, 'extensions', base);
  if (extEnd !== end) fail(`${end - extEnd} trailing bytes after extensions at byte ${extEnd + base}`);
  return parseExtensions(b, pos + 2, extEnd, base, fields);
}

function parseExtensions(b: Buffer, pos: number, end: number, base: number, fields: HelloFields): HelloFields {
  const seen = new Set<number>();
  while (pos < end) {
    if (pos + 4 > end) fail(`extension header overruns extensions block at byte ${pos + base}`);
    const type = b.readUInt16BE(pos);
    const len = b.readUInt16BE(pos + 2);
    const start = pos + 4;
    if (start + len > end) {
      fail(`extension ${hex(type)} length ${len} overruns extensions block at byte ${pos + base}`);
    }
    // RFC 8446 §4.2: duplicates are illegal; rejecting them stops us and the backend disagreeing.
    if (seen.has(type)) fail(`duplicate extension ${hex(type)} at byte ${pos + base}`);
    seen.add(type);
    if (type === EXT_PRE_SHARED_KEY && start + len !== end) {
      fail(`pre_shared_key extension is not last at byte ${pos + base}`);
    }
    const ext = b.subarray(start, start + len);
    if (type === EXT_SERVER_NAME) fields.sni = parseServerName(ext, start + base);
    else if (type === EXT_ALPN) fields.alpn = parseAlpn(ext, start + base);
    else if (type === EXT_SUPPORTED_VERSIONS) fields.supportedVersions = parseVersions(ext, start + base);
    pos = start + len;
  }
  return fields;
}

/** RFC 6066 §3: one host_name (type 0); other name types are skipped by their length. */
function parseServerName(e: Buffer, base: number): string | undefined {
  const listEnd = vectorEnd(e, 0, 2, e.length, 'server_name_list', base);
  if (listEnd !== e.length) fail(`server_name extension has ${e.length - listEnd} trailing bytes at byte ${base}`);
  if (listEnd === 2) fail(`server_name_list is empty at byte ${base}`);
  let pos = 2;
  let host: string | undefined;
  while (pos < listEnd) {
    const nameType = e[pos]!;
    const nameEnd = vectorEnd(e, pos + 1, 2, listEnd, 'server_name', base);
    if (nameType === 0) {
      if (host !== undefined) fail(`second host_name in server_name_list at byte ${pos + base}`);
      host = validateHostName(e.toString('latin1', pos + 3, nameEnd), pos + base);
    }
    pos = nameEnd;
  }
  return host;
}

/** Lower-cases, drops one trailing dot, and checks LDH (plus `_`) labels; IP literals are refused. */
export function validateHostName(raw: string, at: number): string {
  let name = raw.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name.length === 0) fail(`empty host_name at byte ${at}`);
  if (name.length > MAX_DNS_NAME) fail(`host_name of ${name.length} bytes exceeds ${MAX_DNS_NAME} at byte ${at}`);
  let labelLen = 0;
  let labelDigitsOnly = true;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x2e) {
      if (labelLen === 0) fail(`host_name ${JSON.stringify(raw)} has an empty label at byte ${at}`);
      labelLen = 0;
      labelDigitsOnly = true;
      continue;
    }
    const digit = c >= 0x30 && c <= 0x39;
    if (!digit && !(c >= 0x61 && c <= 0x7a) && c !== 0x2d && c !== 0x5f) {
      fail(`host_name ${JSON.stringify(raw)} has invalid character at byte ${at}`);
    }
    labelDigitsOnly &&= digit;
    if (++labelLen > 63) fail(`host_name ${JSON.stringify(raw)} has a label over 63 bytes at byte ${at}`);
  }
  if (labelLen === 0) fail(`host_name ${JSON.stringify(raw)} has an empty label at byte ${at}`);
  // No top-level domain is all digits (RFC 3696 §2), so this catches every IPv4 literal form.
  if (labelDigitsOnly) fail(`host_name ${JSON.stringify(raw)} is an ip literal (rfc 6066 §3) at byte ${at}`);
  return name;
}

/** RFC 7301 §3.1: a non-empty list of 1-255 byte names; GREASE identifiers are dropped. */
function parseAlpn(e: Buffer, base: number): string[] {
  const listEnd = vectorEnd(e, 0, 2, e.length, 'alpn list', base);
  if (listEnd !== e.length) fail(`alpn extension has ${e.length - listEnd} trailing bytes at byte ${base}`);
  if (listEnd === 2) fail(`alpn protocol_name_list is empty at byte ${base}`);
  const out: string[] = [];
  let pos = 2;
  while (pos < listEnd) {
    const nameEnd = vectorEnd(e, pos, 1, listEnd, 'alpn protocol name', base);
    if (nameEnd === pos + 1) fail(`empty alpn protocol name at byte ${pos + base}`);
    const grease = nameEnd === pos + 3 && isGrease(e.readUInt16BE(pos + 1));
    if (!grease) out.push(e.toString('latin1', pos + 1, nameEnd));
    pos = nameEnd;
  }
  return out;
}

/** RFC 8446 §4.2.1 (ClientHello form): a one-byte length, then 2-byte versions; GREASE dropped. */
function parseVersions(e: Buffer, base: number): number[] {
  const listEnd = vectorEnd(e, 0, 1, e.length, 'supported_versions', base);
  const len = listEnd - 1;
  if (listEnd !== e.length) fail(`supported_versions has ${e.length - listEnd} trailing bytes at byte ${base}`);
  if (len < 2 || len % 2 !== 0) fail(`supported_versions length ${len} is not a non-empty even number at byte ${base}`);
  const out: number[] = [];
  for (let pos = 1; pos < listEnd; pos += 2) {
    const v = e.readUInt16BE(pos);
    if (!isGrease(v)) out.push(v);
  }
  return out;
}
