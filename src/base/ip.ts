/**
 * IP addresses and CIDR blocks: parsing, canonical text, containment and the bytes we hash.
 *
 * 1. Every address is parsed into a 16-byte form; IPv4 is stored IPv4-mapped (::ffff:a.b.c.d),
 *    so ranges compare as BFE does (16-byte lexicographic order, reference bfe.md §1.5).
 * 2. An IPv4-mapped IPv6 address (what a dual-stack socket reports for an IPv4 peer) *is* IPv4:
 *    family 4, printed dotted, hashed as 4 bytes. One client therefore has one identity whether
 *    it arrived over an IPv4 socket, a dual-stack socket or a PROXY header.
 * 3. Families never mix: an IPv4 address is not inside an IPv6 CIDR or range (as Go's
 *    `IPNet.Contains`), even `::ffff:0:0/96`.
 * 4. Parsing is strict (Go's `net.ParseIP`): IPv4 octets are decimal 0–255 without leading zeros,
 *    IPv6 has hex groups of 1–4 digits, at most one `::`, an optional dotted IPv4 tail, no zone.
 *
 * `parseIpInto` writes into a caller's buffer so hot paths (ranges, CIDR checks) allocate nothing.
 */

/** 4 for IPv4 (including IPv4-mapped IPv6), 6 for IPv6. */
export type IpFamily = 4 | 6;

/** A parsed address. */
export interface Ip {
  readonly family: IpFamily;
  /** The 16-byte form; IPv4 as ::ffff:a.b.c.d. */
  readonly bytes: Uint8Array;
  /** Canonical text: dotted IPv4, or RFC 5952 IPv6 (lower case, longest zero run as `::`). */
  readonly text: string;
}

/** A parsed CIDR block; `bytes` is the network address (host bits cleared). */
export interface Cidr {
  readonly family: IpFamily;
  readonly bytes: Uint8Array;
  /** Per-byte mask in the 16-byte space. */
  readonly mask: Uint8Array;
  /** Prefix length as written for the family (0–32 for IPv4, 0–128 for IPv6). */
  readonly prefix: number;
  /** Canonical text, e.g. `10.0.0.0/8`. */
  readonly text: string;
}

/** Parses dotted IPv4 from text[start, end) into out[at..at+3]; false if malformed. */
function parseV4(text: string, start: number, end: number, out: Uint8Array, at: number): boolean {
  let octet = 0;
  let digits = 0;
  let index = 0;
  for (let i = start; i <= end; i++) {
    const c = i < end ? text.charCodeAt(i) : 0x2e;
    if (c === 0x2e) {
      if (digits === 0 || index > 3) return false;
      out[at + index++] = octet;
      octet = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits > 0 && octet === 0) return false; // leading zero: ambiguous (octal in some stacks)
      octet = octet * 10 + (c - 0x30);
      if (octet > 255) return false;
      digits++;
    } else {
      return false;
    }
  }
  return index === 4;
}

/** Value of a hex digit, or -1. */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/** Parses IPv6 text into out (16 bytes); false if malformed. */
function parseV6(text: string, out: Uint8Array): boolean {
  const end = text.length;
  let i = 0;
  let at = 0; // next byte to write
  let gap = -1; // byte index where '::' sits
  if (text.startsWith('::')) {
    gap = 0;
    i = 2;
  } else if (text.charCodeAt(0) === 0x3a) {
    return false;
  }
  while (i < end && at < 16) {
    let value = 0;
    let digits = 0;
    let j = i;
    for (; j < end && digits <= 4; j++) {
      const h = hexValue(text.charCodeAt(j));
      if (h < 0) break;
      value = value * 16 + h;
      digits++;
    }
    if (j < end && text.charCodeAt(j) === 0x2e) {
      // dotted IPv4 tail: must be last and fit in the final 4 bytes
      if (at > 12 || !parseV4(text, i, end, out, at)) return false;
      at += 4;
      i = end;
      break;
    }
    if (digits === 0 || digits > 4) return false;
    out[at++] = value >>> 8;
    out[at++] = value & 0xff;
    i = j;
    if (i === end) break;
    if (text.charCodeAt(i) !== 0x3a) return false;
    i++;
    if (text.charCodeAt(i) === 0x3a) {
      if (gap >= 0) return false; // a second '::'
      gap = at;
      i++;
      if (i === end) break;
    } else if (i === end) {
      return false; // trailing single ':'
    }
  }
  if (i !== end) return false;
  if (gap < 0) return at === 16;
  if (at === 16) return false; // '::' must stand for at least one group
  const tail = at - gap;
  out.copyWithin(16 - tail, gap, at);
  out.fill(0, gap, 16 - tail);
  return true;
}

/** True when the 16-byte form is IPv4-mapped (::ffff:a.b.c.d). */
function isMapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

/**
 * Parses an address into `out` (16 bytes, overwritten) without allocating; returns its family or
 * 0 when the text is not an address.
 */
export function parseIpInto(text: string, out: Uint8Array): IpFamily | 0 {
  if (text.length === 0 || text.length > 45) return 0;
  if (text.includes(':')) {
    if (!parseV6(text, out)) return 0;
    return isMapped(out) ? 4 : 6;
  }
  out.fill(0, 0, 10);
  out[10] = 0xff;
  out[11] = 0xff;
  return parseV4(text, 0, text.length, out, 12) ? 4 : 0;
}

/** Canonical text of a 16-byte form for a family (RFC 5952 for IPv6). */
export function formatIpBytes(b: Uint8Array, family: IpFamily): string {
  if (family === 4) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  // Longest run of ≥ 2 zero groups becomes '::' (first one on a tie).
  let bestAt = -1;
  let bestLen = 1;
  for (let g = 0; g < 8; ) {
    let n = 0;
    while (g + n < 8 && b[2 * (g + n)] === 0 && b[2 * (g + n) + 1] === 0) n++;
    if (n > bestLen) {
      bestAt = g;
      bestLen = n;
    }
    g += n > 0 ? n : 1;
  }
  const parts: string[] = [];
  for (let g = 0; g < 8; g++) {
    if (g === bestAt) {
      parts.push(g === 0 ? ':' : '');
      g += bestLen - 1;
      if (g === 7) parts.push('');
      continue;
    }
    parts.push((((b[2 * g] ?? 0) << 8) | (b[2 * g + 1] ?? 0)).toString(16));
  }
  return parts.join(':');
}

/** Parses an address; undefined when the text is not one (strict, no zone, no brackets). */
export function parseIp(text: string): Ip | undefined {
  const bytes = new Uint8Array(16);
  const family = parseIpInto(text, bytes);
  if (family === 0) return undefined;
  return { family, bytes, text: formatIpBytes(bytes, family) };
}

/** Canonical text of an address (`::FFFF:1.2.3.4` → `1.2.3.4`, `2001:DB8:0::1` → `2001:db8::1`). */
export function canonicalIp(text: string): string | undefined {
  return parseIp(text)?.text;
}

/** Lexicographic comparison of two 16-byte forms (negative, 0, positive). */
export function compareIpBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < 16; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Parses `addr/prefix` (host bits are cleared, as Go's `ParseCIDR` network); a bare address is a
 * host route (/32 or /128). Undefined when malformed or the prefix is out of range for the family.
 */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (ip === undefined) return undefined;
  const max = ip.family === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const digits = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(digits)) return undefined;
    prefix = Number(digits);
    if (prefix > max) return undefined;
  }
  const bits = ip.family === 4 ? prefix + 96 : prefix;
  const mask = new Uint8Array(16);
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    mask[i] = (0xff << (8 - keep)) & 0xff;
    bytes[i] = (ip.bytes[i] ?? 0) & (mask[i] ?? 0);
  }
  return { family: ip.family, bytes, mask, prefix, text: `${formatIpBytes(bytes, ip.family)}/${prefix}` };
}

const scratch = new Uint8Array(16);

/** True when the 16-byte form of an address of `family` lies in the block. Allocation-free. */
export function cidrContainsBytes(cidr: Cidr, bytes: Uint8Array, family: IpFamily): boolean {
  if (family !== cidr.family) return false;
  for (let i = 0; i < 16; i++) {
    if (((bytes[i] ?? 0) & (cidr.mask[i] ?? 0)) !== cidr.bytes[i]) return false;
  }
  return true;
}

/** True when the address (text, e.g. a socket's remoteAddress) lies in the block; false if unparsable. */
export function cidrContains(cidr: Cidr, ip: string): boolean {
  const family = parseIpInto(ip, scratch);
  return family !== 0 && cidrContainsBytes(cidr, scratch, family);
}

/**
 * The canonical bytes of a client address for hashing (GSLB's client-ip key): 4 bytes for IPv4
 * (including IPv4-mapped IPv6), 16 bytes for IPv6. BFE hashes whatever form its socket produced
 * (4 or 16 bytes, reference bfe.md §5); fixing one form keeps a client on one sub-cluster across
 * listeners and PROXY headers. Unparsable text hashes as its UTF-8 bytes so it is still stable.
 */
export function ipHashBytes(ip: string): Uint8Array {
  const bytes = new Uint8Array(16);
  const family = parseIpInto(ip, bytes);
  if (family === 4) return bytes.slice(12);
  if (family === 6) return bytes;
  return new TextEncoder().encode(ip);
}
