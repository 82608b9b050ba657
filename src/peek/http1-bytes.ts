/**
 * The request head's common case read on its bytes (issue 18), for http1.ts `parseHead`:
 * the request line, an origin-form target's path, a plain Host value and each field line's
 * strict checks, without a string per field. Each function answers only what it can decide
 * alone; anything else (an error, or a form it does not know: absolute-form, escapes, dot
 * segments, IPv6, upper-case hosts…) is left to the string-based rules of http1-target.ts,
 * http1-host.ts and http1-fields.ts, which decide it and word the error exactly as before.
 */

import { TCHAR } from './http1-fields.ts';

const SP = 0x20;
const HT = 0x09;
const COLON = 0x3a;
const SLASH = 0x2f;
const QUESTION = 0x3f;
const DOT = 0x2e;
const PERCENT = 0x25;

/** The methods llhttp knows that most heads carry, as interned strings (no string per head). */
const METHODS: readonly string[] = ['GET', 'PUT', 'POST', 'HEAD', 'PATCH', 'TRACE', 'DELETE', 'OPTIONS', 'CONNECT'];
const METHOD_BYTES = METHODS.map((m) => Buffer.from(m, 'latin1'));

/**
 * The method of bytes [from, to), interned when it is a common one; undefined when it is not
 * a token (the string rules word the error).
 */
export function methodOf(buf: Uint8Array, from: number, to: number): string | undefined {
  const n = to - from;
  for (let m = 0; m < METHOD_BYTES.length; m++) {
    const bytes = METHOD_BYTES[m]!;
    if (bytes.length !== n) continue;
    let i = 0;
    while (i < n && buf[from + i] === bytes[i]) i++;
    if (i === n) return METHODS[m];
  }
  if (n === 0) return undefined;
  for (let i = from; i < to; i++) if (TCHAR[buf[i]!] !== 1) return undefined;
  return Buffer.from(buf.buffer, buf.byteOffset + from, n).toString('latin1');
}

/**
 * The minor version when bytes [from, to) are exactly `HTTP/1.1` or `HTTP/1.0`, else -1.
 */
export function versionOf(buf: Uint8Array, from: number, to: number): 0 | 1 | -1 {
  if (to - from !== 8) return -1;
  if (
    buf[from] !== 0x48 ||
    buf[from + 1] !== 0x54 ||
    buf[from + 2] !== 0x54 ||
    buf[from + 3] !== 0x50 ||
    buf[from + 4] !== SLASH ||
    buf[from + 5] !== 0x31 ||
    buf[from + 6] !== DOT
  ) {
    return -1;
  }
  const minor = buf[from + 7];
  return minor === 0x31 ? 1 : minor === 0x30 ? 0 : -1;
}

// RFC 3986 pchar and "/" (http1-target.ts PATH_CHARS), by byte.
const PATH = new Uint8Array(128);
for (const ch of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+,;=:@/") {
  PATH[ch.charCodeAt(0)] = 1;
}

/**
 * For an origin-form target at bytes [from, to): the offset of its `?` (or `to`) when the path
 * is already normal — only pchar and "/", no escape, no "//", no "/." and no "#" anywhere — so
 * the normalised path is the raw one; -1 otherwise (the string rules decide).
 */
export function plainPathEnd(buf: Uint8Array, from: number, to: number): number {
  if (buf[from] !== SLASH) return -1;
  let i = from;
  let prev = 0;
  for (; i < to; i++) {
    const c = buf[i]!;
    if (c === QUESTION) break;
    if (c >= 128 || PATH[c] === 0 || c === PERCENT) return -1;
    if (prev === SLASH && (c === SLASH || c === DOT)) return -1;
    prev = c;
  }
  for (let j = i; j < to; j++) if (buf[j] === 0x23) return -1; // '#': the string rules refuse it
  return i;
}

/**
 * A Host value at bytes [from, to) in its plain form — lower-case letters, digits, '-' and '.'
 * not at the end, then optionally ':' and 1–5 digits up to 65535 — as the offset of its colon
 * (or `to`) and its port in `out`; false for anything else (the string rules decide).
 */
export function plainHost(buf: Uint8Array, from: number, to: number, out: { colon: number; port: number }): boolean {
  let i = from;
  for (; i < to; i++) {
    const c = buf[i]!;
    if (c === COLON) break;
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === DOT)) return false;
  }
  if (i === from || buf[i - 1] === DOT) return false;
  out.colon = i;
  out.port = -1;
  if (i === to) return true;
  const digits = to - i - 1;
  if (digits < 1 || digits > 5) return false;
  let port = 0;
  for (let j = i + 1; j < to; j++) {
    const c = buf[j]!;
    if (c < 0x30 || c > 0x39) return false;
    port = port * 10 + (c - 0x30);
  }
  if (port > 65535) return false;
  out.port = port;
  return true;
}

/** Where one checked field line's parts are: its colon and its value without OWS. */
export interface FieldSpan {
  colon: number;
  valueFrom: number;
  valueTo: number;
}

/**
 * Checks the field line at bytes [from, to) by parseFieldLine's rules (no leading SP/HT, a
 * colon, a non-empty token name, no CTL or DEL in the value) and fills `out`; false when any
 * rule fails (parseFieldLine words the error).
 */
export function checkField(buf: Uint8Array, from: number, to: number, out: FieldSpan): boolean {
  let i = from;
  for (; i < to; i++) {
    const c = buf[i]!;
    if (c === COLON) break;
    if (TCHAR[c] !== 1) return false; // also SP/HT, and bytes ≥ 128 (TCHAR[c] is undefined)
  }
  if (i === to || i === from) return false;
  out.colon = i;
  return fieldValue(buf, i + 1, to, out) === -1;
}

/** Bytes a field value may not carry (RFC 9110 §5.5): CTLs other than HT, and DEL. */
const VALUE_REFUSED = new Uint8Array(256);
for (let c = 0; c < 256; c++) if ((c < SP && c !== HT) || c === 0x7f) VALUE_REFUSED[c] = 1;

/**
 * The value of a field line, bytes [from, to) after its colon: the span without optional
 * whitespace on either side into `out`, and the index of its first CTL or DEL, or -1. The
 * request (`checkField`) and response (http1-response.ts) field checks share it.
 */
export function fieldValue(
  buf: Uint8Array,
  from: number,
  to: number,
  out: { valueFrom: number; valueTo: number },
): number {
  let a = from;
  let b = to;
  while (a < b && (buf[a] === SP || buf[a] === HT)) a++;
  while (b > a && (buf[b - 1] === SP || buf[b - 1] === HT)) b--;
  out.valueFrom = a;
  out.valueTo = b;
  for (let j = a; j < b; j++) if (VALUE_REFUSED[buf[j]!] === 1) return j;
  return -1;
}

/** The framing and routing fields parseHead reads, by name (case-insensitive). */
export const Field = {
  Other: 0,
  Host: 1,
  Expect: 2,
  Upgrade: 3,
  Connection: 4,
  ContentLength: 5,
  TransferEncoding: 6,
} as const;
export type Field = (typeof Field)[keyof typeof Field];

const NAMES: readonly (readonly [Field, Uint8Array])[] = (
  [
    [Field.Host, 'host'],
    [Field.Expect, 'expect'],
    [Field.Upgrade, 'upgrade'],
    [Field.Connection, 'connection'],
    [Field.ContentLength, 'content-length'],
    [Field.TransferEncoding, 'transfer-encoding'],
  ] as const
).map(([f, name]) => [f, Buffer.from(name, 'latin1')] as const);

/**
 * Which of those fields the (checked, token) name at bytes [from, to) is. Lower-casing by
 * `| 0x20` is exact here: among token bytes only upper-case letters map onto the lower-case
 * letters and '-' of these names.
 */
export function fieldOf(buf: Uint8Array, from: number, to: number): Field {
  const n = to - from;
  if (n !== 4 && n !== 6 && n !== 7 && n !== 10 && n !== 14 && n !== 17) return Field.Other;
  for (let k = 0; k < NAMES.length; k++) {
    const [field, name] = NAMES[k]!;
    if (name.length !== n) continue;
    let i = 0;
    while (i < n && (buf[from + i]! | 0x20) === name[i]) i++;
    return i === n ? field : Field.Other;
  }
  return Field.Other;
}
