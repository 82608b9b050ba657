/**
 * The matchers shared by primitives (reference bfe.md §1.5), each precomputed at build time:
 *
 * 1. `|` lists are split with no trimming: `"a | b"` holds `a ` and ` b`.
 * 2. With the case-insensitive flag, patterns are upper-cased here and the value at match time.
 * 3. Regular expressions are compiled by RE2 in `regex.ts` (unanchored, linear-time matching).
 * 4. Hash buckets (`"100-200|400"`, 0–9999) become a 10000-entry bitmap; the value's UTF-8 bytes
 *    go through murmur3 into a reused buffer, so matching allocates nothing.
 */
import { murmur3Bucket } from '../../base/murmur3.ts';
import type { Request } from '../../contracts/types.ts';
import type { BuildContext, Condition } from './types.ts';

/** A string test prepared at build time. */
export type StringMatch = (value: string) => boolean;

/** The list-matching kinds of BFE (In, PrefixIn, SuffixIn, Contain, PathElementPrefix). */
export type ListKind = 'in' | 'prefix' | 'suffix' | 'contain' | 'element';

/** Splits a `|` list exactly as BFE does (no trimming, empty elements kept). */
export function splitList(list: string): string[] {
  return list.split('|');
}

/** Builds a list matcher; `fold` upper-cases both sides. */
export function listMatcher(kind: ListKind, list: string, fold: boolean): StringMatch {
  let patterns = splitList(list).map((p) => (fold ? p.toUpperCase() : p));
  if (kind === 'in') {
    const set = new Set(patterns);
    return fold ? (v) => set.has(v.toUpperCase()) : (v) => set.has(v);
  }
  if (kind === 'element') patterns = patterns.map((p) => (p.endsWith('/') ? p : `${p}/`));
  const test = LIST_TESTS[kind];
  return (value) => {
    const v = fold ? value.toUpperCase() : value;
    for (let i = 0; i < patterns.length; i++) if (test(v, patterns[i] as string)) return true;
    return false;
  };
}

const LIST_TESTS: Readonly<Record<Exclude<ListKind, 'in'>, (v: string, p: string) => boolean>> = {
  prefix: (v, p) => v.startsWith(p),
  suffix: (v, p) => v.endsWith(p),
  contain: (v, p) => v.includes(p),
  // The value gets a trailing '/' too (BFE): v + '/' startsWith p, without building v + '/'.
  element: (v, p) => v.startsWith(p) || (v.length === p.length - 1 && p.startsWith(v)),
};

/** Number of hash buckets (BFE's fixed 10000). */
export const BUCKETS = 10000;

/** Parses a bucket list (`"4073|5000-9999"`) into a bitmap, failing at argument `index`. */
export function bucketSet(spec: string, ctx: BuildContext, index: number): Uint8Array {
  const set = new Uint8Array(BUCKETS);
  const bad = (why: string): never =>
    ctx.fail(
      index,
      `bad bucket list "${spec}": ${why} (expected numbers 0-9999 or ranges a-b with a <= b, joined by |)`,
    );
  for (const item of splitList(spec)) {
    const parts = item.split('-');
    if (parts.length > 2) bad(`"${item}" has more than one '-'`);
    const nums = parts.map((p) => {
      if (!/^[0-9]+$/.test(p)) bad(`"${p}" is not a number`);
      const n = Number(p);
      if (n >= BUCKETS) bad(`${n} is out of range`);
      return n;
    });
    const from = nums[0] as number;
    const to = nums[1] ?? from;
    if (from > to) bad(`range ${from}-${to} is reversed`);
    set.fill(1, from, to + 1);
  }
  return set;
}

let scratch = new Uint8Array(256);

/** UTF-8 encodes `s` into the shared scratch buffer (grown when needed); returns the length. */
function utf8Into(s: string): number {
  if (scratch.length < s.length * 3) scratch = new Uint8Array(s.length * 3);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    } else if (c >= 0xd800 && c < 0xe000) {
      c = 0xfffd; // lone surrogate: what TextEncoder (and Go's string conversion) writes
    }
    if (c < 0x80) scratch[n++] = c;
    else if (c < 0x800) {
      scratch[n++] = 0xc0 | (c >> 6);
      scratch[n++] = 0x80 | (c & 0x3f);
    } else if (c < 0x10000) {
      scratch[n++] = 0xe0 | (c >> 12);
      scratch[n++] = 0x80 | ((c >> 6) & 0x3f);
      scratch[n++] = 0x80 | (c & 0x3f);
    } else {
      scratch[n++] = 0xf0 | (c >> 18);
      scratch[n++] = 0x80 | ((c >> 12) & 0x3f);
      scratch[n++] = 0x80 | ((c >> 6) & 0x3f);
      scratch[n++] = 0x80 | (c & 0x3f);
    }
  }
  return n;
}

/** The BFE hash bucket (0–9999) of a string's UTF-8 bytes. */
export function bucketOf(value: string): number {
  const n = utf8Into(value);
  return murmur3Bucket(scratch.subarray(0, n), BUCKETS);
}

/** A hash-bucket matcher; `lower` lower-cases the value first (BFE's hash matchers fold down). */
export function hashMatcher(spec: string, lower: boolean, ctx: BuildContext, index: number): StringMatch {
  const set = bucketSet(spec, ctx, index);
  return (v) => set[bucketOf(lower ? v.toLowerCase() : v)] === 1;
}

/** A condition that fetches a value (undefined = fetch failed → false, as BFE) and matches it. */
export function onValue(fetch: (req: Request) => string | undefined, match: StringMatch): Condition {
  return (req) => {
    const v = fetch(req);
    return v !== undefined && match(v);
  };
}

/** The boolean argument at `index` ('true'/'false' after the prototype check). */
export function bool(args: readonly string[], index: number): boolean {
  return args[index] === 'true';
}

/** The string argument at `index` (present after the prototype check). */
export function str(args: readonly string[], index: number): string {
  return args[index] as string;
}
