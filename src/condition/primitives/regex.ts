/**
 * Regular expressions of the `*_regmatch` primitives (reference bfe.md §1.6), on RE2.
 *
 * BFE compiles these with Go's `regexp` (RE2 syntax, linear-time matching). V8's `RegExp`
 * backtracks, so a pattern such as `^/assets/([a-z0-9]+/?)*\.css$` takes time exponential in
 * the length of a hostile path, on the event loop, for every connection. So:
 *
 * 1. Patterns compile with `re2js` (a pure-JS port of RE2/RE2J, the Go `regexp` engine): Go
 *    syntax and limits (repeat counts ≤ 1000, bounded nesting), inline flags `(?imsU)` anywhere,
 *    matching unanchored, in time linear in the value's length. Linear is not enough on its own:
 *    the constant grows with the compiled program (`\pL{1,1000}\d` is 2002 instructions and
 *    took ~0.8 s on one 16 KiB User-Agent), and a pattern whose DFA has many states pays ~1–6 µs
 *    per character building them (`[ab]*a[ab]{20}\d`, 26 instructions, ~25 ms at 16 KiB).
 * 1b. So one evaluation is bounded twice over: a pattern whose program exceeds
 *    `REGEX_MAX_INSTRUCTIONS` (100, Envoy's default `max_program_size`) is a build error, and a
 *    value longer than `REGEX_MAX_INPUT` (1024 characters) is not matched at all (the primitive
 *    is false, as for a missing value). The worst accepted pattern on the longest matched value
 *    costs a few ms (measured in src/condition/README.md), whatever `maxHeaderBytes` allows.
 * 2. A pattern RE2 cannot compile (lookaround, backreferences, possessive quantifiers, atomic
 *    groups, `\Z`, `\u`…) is a build error at config load (`check` and reload refuse it), with
 *    RE2's reason and, for the usual PCRE/JavaScript constructs, what is wrong with them.
 * 3. The compiled program is built once per snapshot; matching calls `test`, which requests no
 *    capture groups, so RE2 runs its DFA (falling back to its NFA, still linear).
 * 4. Values are matched as the JavaScript strings the other matchers see, one code point per
 *    character (a surrogate pair is one character, as `.` in Go matches one rune).
 */
import { RE2JS } from 're2js';
import type { StringMatch } from './matchers.ts';
import type { BuildContext } from './types.ts';

/** The largest compiled program a `*_regmatch` pattern may have (RE2 instructions). */
export const REGEX_MAX_INSTRUCTIONS = 100;

/** The longest value a `*_regmatch` primitive matches (characters); a longer one is false. */
export const REGEX_MAX_INPUT = 1024;

// What the usual non-RE2 constructs are, for the error message (checked only after RE2 refused).
const HINTS: readonly (readonly [RegExp, string])[] = [
  [/\(\?[=!]/, 'lookahead is not RE2 syntax'],
  [/\(\?<[=!]/, 'lookbehind is not RE2 syntax'],
  [/\\[1-9]|\\k[<{']/, 'backreferences are not RE2 syntax'],
  [/[*+?}]\+/, 'possessive quantifiers are not RE2 syntax'],
  [/\(\?>/, 'atomic groups are not RE2 syntax'],
  [/\\Z/, 'use \\z for the end of the text'],
  [/\\u/, 'write \\x{hhhh} for a code point'],
];

/** RE2's reason without its generic prefix, plus a hint for a construct we recognise. */
function reason(source: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const base = message.replace(/^error parsing regexp: /, '');
  for (const [construct, hint] of HINTS) {
    if (construct.test(source)) return `${base} (${hint}; RE2 matches in linear time)`;
  }
  return base;
}

/** Compiles a regular expression argument (Go RE2 syntax) at argument `index`, failing there. */
export function regexMatcher(source: string, ctx: BuildContext, index: number): StringMatch {
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (e) {
    return ctx.fail(index, `argument ${index + 1} (regex): bad regular expression \`${source}\`: ${reason(source, e)}`);
  }
  const size: number = re.re2().numberOfInstructions();
  if (size > REGEX_MAX_INSTRUCTIONS) {
    return ctx.fail(
      index,
      `argument ${index + 1} (regex): regular expression \`${source}\` compiles to ${size} instructions, more than ${REGEX_MAX_INSTRUCTIONS}: matching time grows with the program (a counted repetition such as \`{1,1000}\` is one instruction per copy); use a smaller count, or \`*\`/\`+\``,
    );
  }
  return (v) => v.length <= REGEX_MAX_INPUT && re.test(v);
}
