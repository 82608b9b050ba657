/**
 * `JSON.parse` of a routing table file as steps (`sliced.ts`), keeping the unchanged parts of
 * the previous parse. A 10,000-host `routes:` file is ~0.7 MB; one `JSON.parse` of it holds the
 * event loop 5–10 ms and allocates the whole table again on every reload, although a reload
 * usually changes one product or cluster.
 *
 *   {"products": {"p0": {…}, "p1": {…}}, "clusters": {"c0": {…}}, "defaultProduct": "p0"}
 *    └ top-level members   └ one step per member of `products` / `clusters`:
 *                            same text as last time → the previous value (nothing parsed)
 *                            else → JSON.parse of the member's text
 *
 * The text is scanned only at these two levels (keys, `:`, `,`, braces, whitespace); every value
 * and key is still parsed by `JSON.parse`, so what is accepted is exactly JSON. Anything the scan
 * does not expect (not an object at the top, a `__proto__` key, a bad value or token) falls back
 * to one `JSON.parse` of the whole text: the same value, or the same error, as `JSON.parse`.
 * Values handed out are shared with the previous parse: callers must not change them.
 */
import type { Steps } from './sliced.ts';

/** The sections whose members are parsed one by one and reused. */
const SECTIONS = new Set(['products', 'clusters']);

interface Piece {
  readonly text: string;
  readonly value: unknown;
}

/** Thrown inside the scan when the text is not the expected shape: parse it whole instead. */
const FALLBACK = Symbol('fallback');

/** A parser that remembers each member of the last text it parsed (one per source file). */
export class JsonPieces {
  #pieces = new Map<string, Piece>();

  /** `JSON.parse(text)` as steps (see the file header); throws what `JSON.parse` throws. */
  *parse(text: string): Steps<unknown> {
    const next = new Map<string, Piece>();
    let value: unknown;
    try {
      value = yield* this.#scan(text, next);
    } catch (e) {
      if (e !== FALLBACK) throw e;
      this.#pieces = new Map();
      return JSON.parse(text);
    }
    this.#pieces = next;
    return value;
  }

  *#scan(s: string, next: Map<string, Piece>): Steps<unknown> {
    const out: Record<string, unknown> = {};
    const i = skipWs(s, 0);
    if (s.charCodeAt(i) !== OPEN) throw FALLBACK;
    const end = yield* eachMember(s, i, (key, start) => this.#member(s, key, start, out, next));
    if (skipWs(s, end) !== s.length) throw FALLBACK;
    return out;
  }

  /**
   * One top-level member, whose value starts at `start`: `products` and `clusters` member by
   * member, others at once. Returns the index after the value.
   */
  *#member(
    s: string,
    key: string,
    start: number,
    out: Record<string, unknown>,
    next: Map<string, Piece>,
  ): Steps<number> {
    if (!SECTIONS.has(key) || s.charCodeAt(start) !== OPEN) {
      const end = endOfValue(s, start);
      out[key] = parsePart(s.slice(start, end));
      return end;
    }
    const section: Record<string, unknown> = {};
    const end = yield* eachMember(s, start, (name, vs) => {
      const ve = endOfValue(s, vs);
      const text = s.slice(vs, ve);
      const id = `${key}\0${name}`;
      const old = this.#pieces.get(id);
      const value = old !== undefined && old.text === text ? old.value : parsePart(text);
      section[name] = value;
      next.set(id, { text, value });
      return once(ve);
    });
    out[key] = section;
    return end;
  }
}

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

/** One step, then `end`. */
function* once(end: number): Steps<number> {
  yield;
  return end;
}

function parsePart(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw FALLBACK;
  }
}

function skipWs(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** The index after the string starting at `i` (a `"`): the first `"` after an even run of `\\`. */
function endOfString(s: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = s.indexOf('"', from);
    if (q < 0) throw FALLBACK;
    let b = q - 1;
    while (s.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The index after the value starting at `i` (its end only: `JSON.parse` checks its inside). */
function endOfValue(s: string, i: number): number {
  const first = s.charCodeAt(i);
  if (first === QUOTE) return endOfString(s, i);
  if (first === OPEN || first === 0x5b) {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c === QUOTE) j = endOfString(s, j) - 1;
      else if (c === OPEN || c === 0x5b) depth++;
      else if (c === CLOSE || c === 0x5d) {
        if (--depth === 0) return j + 1;
      }
    }
    throw FALLBACK;
  }
  let j = i;
  for (; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === COMMA || c === CLOSE || c === 0x5d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
  }
  if (j === i) throw FALLBACK;
  return j;
}

/**
 * Walks the members of the object starting at `i` (a `{`), handing each key and where its value
 * starts to `member` (which returns the index after the value); returns the index after the `}`.
 */
function* eachMember(s: string, i: number, member: (key: string, start: number) => Steps<number>): Steps<number> {
  i = skipWs(s, i + 1);
  if (s.charCodeAt(i) === CLOSE) return i + 1;
  for (;;) {
    if (s.charCodeAt(i) !== QUOTE) throw FALLBACK;
    const keyEnd = endOfString(s, i);
    const key = parsePart(s.slice(i, keyEnd));
    if (key === '__proto__') throw FALLBACK;
    i = skipWs(s, keyEnd);
    if (s.charCodeAt(i) !== COLON) throw FALLBACK;
    const end = yield* member(key as string, skipWs(s, i + 1));
    i = skipWs(s, end);
    const c = s.charCodeAt(i);
    if (c === CLOSE) return i + 1;
    if (c !== COMMA) throw FALLBACK;
    i = skipWs(s, i + 1);
  }
}
