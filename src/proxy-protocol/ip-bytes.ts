/**
 * Strict IP text ⇄ bytes for PROXY headers. Kept local (not `src/base/ip.ts`) because the PROXY
 * grammar is stricter than general parsing: no leading zeros in IPv4 octets, no IPv6 zone ids.
 * Output is canonical (RFC 5952, IPv4-mapped shown as `::ffff:a.b.c.d`) so v1 and v2 headers
 * announcing the same address compare equal.
 */

const V4_OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/** Parses dotted-quad IPv4 with no leading zeros; `undefined` when not valid. */
export function parseIpv4(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!V4_OCTET.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    out[i] = v;
  }
  return out;
}

function parseGroups(s: string, out: number[]): boolean {
  if (s === '') return true;
  for (const g of s.split(':')) {
    if (!HEX_GROUP.test(g)) return false;
    out.push(Number.parseInt(g, 16));
  }
  return true;
}

/** Parses IPv6 text (with `::` and an optional trailing dotted quad); `undefined` when not valid. */
export function parseIpv6(s: string): Uint8Array | undefined {
  if (s.length < 2 || s.length > 45) return undefined;
  let tail: Uint8Array | undefined;
  const lastColon = s.lastIndexOf(':');
  if (s.indexOf('.', lastColon) !== -1) {
    tail = parseIpv4(s.slice(lastColon + 1));
    if (tail === undefined) return undefined;
    // Keep the colon before the dotted quad when it is part of `::`.
    s = s[lastColon - 1] === ':' ? s.slice(0, lastColon + 1) : s.slice(0, lastColon);
  }
  const want = tail ? 6 : 8;
  const head: number[] = [];
  const rest: number[] = [];
  const dbl = s.indexOf('::');
  if (dbl === -1) {
    if (!parseGroups(s, head) || head.length !== want) return undefined;
  } else {
    if (s.indexOf('::', dbl + 1) !== -1) return undefined;
    if (!parseGroups(s.slice(0, dbl), head) || !parseGroups(s.slice(dbl + 2), rest)) return undefined;
    if (head.length + rest.length >= want) return undefined;
  }
  const groups = [...head, ...new Array<number>(want - head.length - rest.length).fill(0), ...rest];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  if (tail) out.set(tail, 12);
  return out;
}

/** Formats 4 bytes at `off` as dotted-quad IPv4. */
export function formatIpv4(b: Uint8Array, off = 0): string {
  return `${b[off]}.${b[off + 1]}.${b[off + 2]}.${b[off + 3]}`;
}

/** True when the 16 bytes at `off` are an IPv4-mapped IPv6 address (::ffff:0:0/96). */
export function isV4Mapped(b: Uint8Array, off = 0): boolean {
  for (let i = 0; i < 10; i++) if (b[off + i] !== 0) return false;
  return b[off + 10] === 0xff && b[off + 11] === 0xff;
}

/** Formats 16 bytes at `off` as canonical RFC 5952 IPv6 text. */
export function formatIpv6(b: Uint8Array, off = 0): string {
  if (isV4Mapped(b, off)) return `::ffff:${formatIpv4(b, off + 12)}`;
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push((b[off + i * 2]! << 8) | b[off + i * 2 + 1]!);
  // RFC 5952 §4.2: compress the longest run of two or more zero groups, the first one on a tie.
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  const hex = g.map((x) => x.toString(16));
  if (bestAt === -1) return hex.join(':');
  return `${hex.slice(0, bestAt).join(':')}::${hex.slice(bestAt + bestLen).join(':')}`;
}

/** An address as the encoder needs it: the 4 IPv4 bytes when it is IPv4 or v4-mapped, else 16. */
export function addressBytes(ip: string): Uint8Array | undefined {
  const v4 = parseIpv4(ip);
  if (v4) return v4;
  const zone = ip.indexOf('%');
  // A zone id only means something on the sending host; the peer cannot use it.
  const v6 = parseIpv6(zone === -1 ? ip : ip.slice(0, zone));
  if (v6 === undefined) return undefined;
  return isV4Mapped(v6) ? v6.subarray(12) : v6;
}

/** Widens a 4-byte IPv4 address to its IPv4-mapped 16-byte form; 16-byte input is returned as is. */
export function toV6(b: Uint8Array): Uint8Array {
  if (b.length === 16) return b;
  const out = new Uint8Array(16);
  out[10] = 0xff;
  out[11] = 0xff;
  out.set(b, 12);
  return out;
}
