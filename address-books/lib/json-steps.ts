/**
 * `JSON.parse` of a routing table file's bytes as steps (`sliced.ts`), keeping the unchanged
 * parts of the previous parse. A 10,000-host `routes:` file is ~0.7 MB: read as one string, it
 * lands in V8's large-object space on every reload (so mark-compacts come due), and one
 * `JSON.parse` of it holds the event loop 5–10 ms and allocates the whole table again, although
 * a reload usually changes one product or cluster.
 *
 *   {"products": {"p0": {…}, "p1": {…}}, "clusters": {"c0": {…}}, "defaultProduct": "p0"}
 *    └ top-level members   └ one step per member of `products` / `clusters`:
 *                            key and value bytes equal to the previous read's → the previous
 *                            name and value (nothing decoded, nothing parsed, nothing scanned)
 *                            else → JSON.parse of the member's bytes decoded as UTF-8
 *
 * 1. The file stays a Buffer (outside the JS heap); the scan reads bytes at two levels only
 *    (keys, `:`, `,`, braces, whitespace). `"` and `\` never occur inside a multi-byte UTF-8
 *    sequence, so byte offsets delimit the same strings the decoded text would.
 * 2. A member is compared with the previous read's member at the same index (then, if its key
 *    differs, with the previous member of that name) by `Buffer.compare` of the two byte ranges
 *    (the previous read's bytes are kept). A value that starts with `{`, `[` or `"` ends where
 *    its previous bytes ended when those bytes are equal, so an unchanged member is not scanned.
 * 3. A section (`products`, `clusters`) whose members are all the previous ones, in the same
 *    order, is the previous section object: the compile then sees an unchanged table by identity.
 *
 * Every value and key that is decoded is parsed by `JSON.parse`, so what is accepted is exactly
 * JSON. Anything the scan does not expect (not an object at the top, a `__proto__` key, a section
 * key twice, a bad value or token, a byte-order mark) falls back to one `JSON.parse` of the whole
 * text (`bytes.toString('utf8')`, as `readFile(file, 'utf8')` gives): the same value, or the same
 * error, as `JSON.parse`. Values handed out are shared with the previous parse: callers must not
 * change them.
 */
import type { Steps } from './sliced.ts';

/** The sections whose members are parsed one by one and reused. */
const SECTIONS = new Set(['products', 'clusters']);

/** One section of a parse: its members' names, values and byte ranges in that parse's bytes. */
interface Section {
  readonly names: readonly string[];
  readonly values: readonly unknown[];
  /** Per member: key start, key end, value start, value end. */
  readonly at: readonly number[];
  /** The section value handed out. */
  readonly object: Record<string, unknown>;
}

/** Thrown inside the scan when the bytes are not the expected shape: parse them whole instead. */
const FALLBACK = Symbol('fallback');

/** A parser that remembers each member of the last bytes it parsed (one per source file). */
export class JsonPieces {
  #bytes: Buffer | undefined;
  #sections = new Map<string, Section>();

  /** `JSON.parse(bytes.toString('utf8'))` as steps (see the file header); throws what it throws. */
  *parse(bytes: Buffer): Steps<unknown> {
    const next = new Map<string, Section>();
    let value: unknown;
    try {
      value = yield* this.#scan(bytes, next);
    } catch (e) {
      if (e !== FALLBACK) throw e;
      this.#bytes = undefined;
      this.#sections = new Map();
      return JSON.parse(bytes.toString('utf8'));
    }
    this.#bytes = bytes;
    this.#sections = next;
    return value;
  }

  *#scan(b: Buffer, next: Map<string, Section>): Steps<unknown> {
    const out: Record<string, unknown> = {};
    const i = skipWs(b, 0);
    if (b[i] !== OPEN) throw FALLBACK;
    const end = yield* eachMember(b, i, (ks, ke, vs) => {
      const key = keyOf(b, ks, ke);
      if (key === '__proto__') throw FALLBACK;
      if (SECTIONS.has(key)) {
        // The reuse state is kept per section key: a section key given twice is parsed whole.
        if (key in out) throw FALLBACK;
        if (b[vs] === OPEN) return this.#section(b, key, vs, out, next);
      }
      const ve = endOfValue(b, vs);
      out[key] = parsePart(b, vs, ve);
      return done(ve);
    });
    if (skipWs(b, end) !== b.length) throw FALLBACK;
    return out;
  }

  /** The members of one section, one step each; returns the index after its `}`. */
  *#section(
    b: Buffer,
    key: string,
    start: number,
    out: Record<string, unknown>,
    next: Map<string, Section>,
  ): Steps<number> {
    const prev = this.#sections.get(key);
    const old = this.#bytes;
    const names: string[] = [];
    const values: unknown[] = [];
    const at: number[] = [];
    let byName: Map<string, number> | undefined;
    let same = prev !== undefined;
    const end = yield* eachMember(b, start, (ks, ke, vs) => {
      const k = names.length;
      let j = -1;
      let name: string;
      if (
        prev !== undefined &&
        old !== undefined &&
        k < prev.names.length &&
        equalRange(b, ks, ke, old, prev.at, 4 * k)
      ) {
        j = k;
        name = prev.names[k]!;
      } else {
        name = keyOf(b, ks, ke);
        if (name === '__proto__') throw FALLBACK;
        same = false;
        if (prev !== undefined) {
          byName ??= new Map(prev.names.map((n, x) => [n, x]));
          j = byName.get(name) ?? -1;
        }
      }
      let ve = -1;
      let value: unknown;
      if (j >= 0 && old !== undefined && startsDelimited(b[vs])) {
        const len = prev!.at[4 * j + 3]! - prev!.at[4 * j + 2]!;
        if (equalRange(b, vs, vs + len, old, prev!.at, 4 * j + 2)) {
          ve = vs + len;
          value = prev!.values[j];
        }
      }
      if (ve < 0) {
        ve = endOfValue(b, vs);
        value = parsePart(b, vs, ve);
        same = false;
      }
      names.push(name);
      values.push(value);
      at.push(ks, ke, vs, ve);
      return once(ve);
    });
    const object = same && names.length === prev!.names.length ? prev!.object : objectOf(names, values);
    next.set(key, { names, values, at, object });
    out[key] = object;
    return end;
  }
}

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

/** No step: `end` at once. */
// biome-ignore lint/correctness/useYield: a member that takes no step of its own
function* done(end: number): Steps<number> {
  return end;
}

/** One step, then `end`. */
function* once(end: number): Steps<number> {
  yield;
  return end;
}

/** Members in order; a later duplicate replaces the value and keeps the first place (`JSON.parse`). */
function objectOf(names: readonly string[], values: readonly unknown[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) o[names[i]!] = values[i];
  return o;
}

/** A value whose end is fixed by its own bytes (a string, object or array; not a number). */
function startsDelimited(c: number | undefined): boolean {
  return c === OPEN || c === OPEN_ARRAY || c === QUOTE;
}

/** True when `b[start, end)` equals the previous bytes' range `at[i], at[i + 1]`. */
function equalRange(b: Buffer, start: number, end: number, old: Buffer, at: readonly number[], i: number): boolean {
  const os = at[i]!;
  const oe = at[i + 1]!;
  const n = end - start;
  if (n !== oe - os || end > b.length) return false;
  if (n > SHORT) return b.compare(old, os, oe, start, end) === 0;
  // A call into C++ costs more than comparing a key or a short value here.
  for (let i = 0; i < n; i++) if (b[start + i] !== old[os + i]) return false;
  return true;
}

/** Up to this many bytes, ranges are compared in JavaScript. */
const SHORT = 32;

function parsePart(b: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(b.toString('utf8', start, end));
  } catch {
    throw FALLBACK;
  }
}

/** The key whose string (quotes included) is `b[start, end)`: printable ASCII at once, else `JSON.parse`. */
function keyOf(b: Buffer, start: number, end: number): string {
  for (let i = start + 1; i < end - 1; i++) {
    const c = b[i]!;
    if (c < 0x20 || c > 0x7f || c === BACKSLASH) return parsePart(b, start, end) as string;
  }
  return b.toString('latin1', start + 1, end - 1);
}

function skipWs(b: Buffer, i: number): number {
  for (;;) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** The index after the string starting at `i` (a `"`): the first `"` after an even run of `\\`. */
function endOfString(b: Buffer, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = indexOfQuote(b, from);
    if (q < 0) throw FALLBACK;
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The next `"` from `i`: a few bytes in JavaScript (keys are short), then `indexOf`. */
function indexOfQuote(b: Buffer, i: number): number {
  const stop = Math.min(i + SHORT, b.length);
  for (; i < stop; i++) if (b[i] === QUOTE) return i;
  return i < b.length ? b.indexOf(QUOTE, i) : -1;
}

/** The index after the value starting at `i` (its end only: `JSON.parse` checks its inside). */
function endOfValue(b: Buffer, i: number): number {
  const first = b[i];
  if (first === QUOTE) return endOfString(b, i);
  if (first === OPEN || first === OPEN_ARRAY) {
    let depth = 0;
    for (let j = i; j < b.length; j++) {
      const c = b[j]!;
      if (c === QUOTE) j = endOfString(b, j) - 1;
      else if (c === OPEN || c === OPEN_ARRAY) depth++;
      else if (c === CLOSE || c === CLOSE_ARRAY) {
        if (--depth === 0) return j + 1;
      }
    }
    throw FALLBACK;
  }
  let j = i;
  for (; j < b.length; j++) {
    const c = b[j];
    if (c === COMMA || c === CLOSE || c === CLOSE_ARRAY || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
  }
  if (j === i) throw FALLBACK;
  return j;
}

/**
 * Walks the members of the object starting at `i` (a `{`), handing each key's byte range (quotes
 * included) and where its value starts to `member` (which returns the index after the value);
 * returns the index after the `}`.
 */
function* eachMember(
  b: Buffer,
  i: number,
  member: (keyStart: number, keyEnd: number, valueStart: number) => Steps<number>,
): Steps<number> {
  i = skipWs(b, i + 1);
  if (b[i] === CLOSE) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) throw FALLBACK;
    const keyEnd = endOfString(b, i);
    const colon = skipWs(b, keyEnd);
    if (b[colon] !== COLON) throw FALLBACK;
    const end = yield* member(i, keyEnd, skipWs(b, colon + 1));
    i = skipWs(b, end);
    const c = b[i];
    if (c === CLOSE) return i + 1;
    if (c !== COMMA) throw FALLBACK;
    i = skipWs(b, i + 1);
  }
}
