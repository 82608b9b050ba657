/**
 * The lexer of the condition language, with BFE's token rules (reference bfe.md §1.1):
 *
 * 1. Space, tab, CR and LF are skipped; `//` runs to the end of the line.
 * 2. Identifiers start with a letter (any Unicode letter), `_` or `-`, then also digits, so
 *    `x-y` is one identifier. Go keywords are refused ("keyword can't be used"), which is why the
 *    catch-all is `default_t`. `$name` is a named-condition reference (our addition, §1.3).
 * 3. `true` / `false` (lower case only) are booleans; `TRUE` is an identifier.
 * 4. `"…"` strings have Go escapes that are validated but **kept as written** (`"a\"b"` is `a\"b`);
 *    `\.` is also accepted; a newline inside is an error. `` `…` `` strings are raw, may span
 *    lines, and lose their CRs. Single quotes are illegal.
 * 5. Integers lex (no primitive accepts one); floats and anything number-like are refused.
 * 6. Operators: `&&`, `||`, `!`, `(`, `)`, `,`. A lone `&` or `|` is illegal.
 */
import type { Token, TokenKind } from './ast.ts';
import { conditionError } from './errors.ts';

const GO_KEYWORDS = new Set([
  'break',
  'case',
  'chan',
  'const',
  'continue',
  'default',
  'defer',
  'else',
  'fallthrough',
  'for',
  'func',
  'go',
  'goto',
  'if',
  'import',
  'interface',
  'map',
  'package',
  'range',
  'return',
  'select',
  'struct',
  'switch',
  'type',
  'var',
]);

const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;

/** True for a character that may start an identifier. */
function isIdentStart(ch: string): boolean {
  return ch === '_' || ch === '-' || LETTER.test(ch);
}

/** True for a character that may continue an identifier. */
function isIdentPart(ch: string): boolean {
  return isIdentStart(ch) || DIGIT.test(ch);
}

/** Splits a condition into tokens, ending with one `eof` token; throws SWB_ERR_CONDITION. */
export function tokenize(source: string, where: string): Token[] {
  const tokens: Token[] = [];
  const fail = (at: number, message: string): never => {
    throw conditionError(where, source, at, message);
  };
  const push = (kind: TokenKind, start: number, end: number, value: string): void => {
    tokens.push({ kind, start, end, value });
  };
  let i = 0;
  while (i < source.length) {
    const ch = source[i] as string;
    const next = source[i + 1];
    if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n') {
      i++;
    } else if (ch === '/' && next === '/') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (ch === '&' || ch === '|') {
      if (next !== ch) fail(i, `illegal token '${ch}': use '${ch}${ch}'`);
      push(ch === '&' ? 'and' : 'or', i, i + 2, ch + ch);
      i += 2;
    } else if (ch === '!' || ch === '(' || ch === ')' || ch === ',') {
      push(ch === '!' ? 'not' : ch === '(' ? 'lparen' : ch === ')' ? 'rparen' : 'comma', i, i + 1, ch);
      i++;
    } else if (ch === '"') {
      i = quoted(source, i, fail, push);
    } else if (ch === '`') {
      const close = source.indexOf('`', i + 1);
      if (close < 0) fail(i, 'unterminated raw string: expected a closing backtick');
      push('string', i, close + 1, source.slice(i + 1, close).replaceAll('\r', ''));
      i = close + 1;
    } else if (ch === "'") {
      fail(i, 'unrecognized token "\'": strings use double quotes or backticks');
    } else if (ch >= '0' && ch <= '9') {
      let j = i;
      while (j < source.length && (source[j] as string) >= '0' && (source[j] as string) <= '9') j++;
      const after = source[j];
      if (after !== undefined && (after === '.' || isIdentPart(after))) {
        fail(i, 'unrecognized token: only whole numbers lex (quote IP addresses and versions)');
      }
      push('int', i, j, source.slice(i, j));
      i = j;
    } else if (ch === '$') {
      let j = i + 1;
      const first = source[j];
      if (first === undefined || !isIdentStart(first)) fail(i, "expected a condition name after '$'");
      while (j < source.length && isIdentPart(source[j] as string)) j++;
      push('var', i, j, source.slice(i + 1, j));
      i = j;
    } else if (isIdentStart(ch) || isIdentStart(String.fromCodePoint(source.codePointAt(i) ?? 0))) {
      i = identifier(source, i, fail, push);
    } else {
      fail(i, `unrecognized token '${String.fromCodePoint(source.codePointAt(i) ?? 0)}'`);
    }
  }
  push('eof', source.length, source.length, '');
  return tokens;
}

type Fail = (at: number, message: string) => never;
type Push = (kind: TokenKind, start: number, end: number, value: string) => void;

/** Lexes an identifier or boolean starting at i; returns the offset after it. */
function identifier(source: string, i: number, fail: Fail, push: Push): number {
  let j = i;
  while (j < source.length) {
    const cp = String.fromCodePoint(source.codePointAt(j) ?? 0);
    if (!isIdentPart(cp)) break;
    j += cp.length;
  }
  const name = source.slice(i, j);
  if (GO_KEYWORDS.has(name)) fail(i, `keyword can't be used: '${name}'`);
  push(name === 'true' || name === 'false' ? 'bool' : 'ident', i, j, name);
  return j;
}

/** Lexes a `"…"` string at i, validating escapes but keeping them as written; returns the offset after it. */
function quoted(source: string, i: number, fail: Fail, push: Push): number {
  let j = i + 1;
  for (;;) {
    const c = source[j];
    if (c === undefined || c === '\n') fail(i, "unterminated string: expected a closing '\"'");
    if (c === '"') break;
    j = c === '\\' ? escapeEnd(source, j, fail) : j + 1;
  }
  push('string', i, j + 1, source.slice(i + 1, j));
  return j + 1;
}

const SIMPLE_ESCAPES = 'abfnrtv\\".';
const HEX_LENGTH: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/** Validates the escape at j (a backslash) as Go does (plus BFE's `\.`); returns the offset after it. */
function escapeEnd(source: string, j: number, fail: Fail): number {
  const c = source[j + 1];
  if (c === undefined) return fail(j, 'unterminated escape');
  if (SIMPLE_ESCAPES.includes(c)) return j + 2;
  if (c >= '0' && c <= '7') {
    const digits = source.slice(j + 1, j + 4);
    if (!/^[0-7]{3}$/.test(digits) || Number.parseInt(digits, 8) > 255) {
      fail(j, 'invalid octal escape: expected three octal digits up to \\377');
    }
    return j + 4;
  }
  const n = HEX_LENGTH[c];
  if (n !== undefined) {
    const digits = source.slice(j + 2, j + 2 + n);
    if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(digits)) fail(j, `invalid escape: \\${c} expects ${n} hex digits`);
    const value = Number.parseInt(digits, 16);
    if (c !== 'x' && (value > 0x10ffff || (value >= 0xd800 && value < 0xe000))) {
      fail(j, `invalid escape: \\${c}${digits} is not a valid code point`);
    }
    return j + 2 + n;
  }
  return fail(j, `unknown escape sequence '\\${c}': write regular expressions in backticks`);
}
