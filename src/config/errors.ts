/**
 * Config errors: every problem names its path (`listeners[0].address: expected host:port`).
 */
import type { z } from 'zod';
import { SwitchboardError } from '../base/errors.ts';
import { didYouMean, suggest } from '../base/suggest.ts';
import { knownKeysAt } from './known-keys.ts';

/** Formats a path like `addressBook.clusters.web.backends[0].address`. */
export function formatPath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

function lowerFirst(s: string): string {
  return s.length > 0 ? s[0]!.toLowerCase() + s.slice(1) : s;
}

/** zod's own text for a wrong type (`Invalid input: expected string, received undefined`). */
const ZOD_TYPE_MESSAGE = /^Invalid input: expected (\w+), received (\w+)$/;

/** zod's own text for a bound (`Too big: expected number to be <=1`). */
const ZOD_SIZE_MESSAGE = /^Too (big|small): expected /;

/** What a bound counts, by the kind of value (a number counts nothing). */
const SIZE_UNITS: Readonly<Record<string, string>> = {
  string: 'character',
  array: 'entry',
  set: 'entry',
  file: 'byte',
};

/** What a YAML user calls zod's type names. */
const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
  map: 'a mapping',
  null: 'an empty value',
  bigint: 'a number',
  date: 'a date',
};

/** One issue's line, and the missing key it reports (to drop it when a misspelt sibling names it). */
interface Line {
  readonly text: string;
  /** The path of the key this line reports missing. */
  readonly missing?: string;
  /** The path of the known key this line's unknown key looks like a misspelling of. */
  readonly meant?: string;
}

/**
 * One line per zod issue, each with its full path. With the `schema` that was parsed, an unknown
 * key names the closest known one ("did you mean"); an invalid enum value does so from the
 * issue's own list when the parse kept its input (`{ reportInput: true }`). zod's raw type text
 * never shows: a missing key is `listeners[0].address: missing key` (left out when an unknown
 * key of the same object is its misspelling, which that line already names), a wrong type
 * `expected a list, got a string`. The one formatter of zod issues: config load, plugin and
 * policy options, the file and sqlite books, the bfe routes.
 */
export function formatIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix = '',
  schema?: z.ZodType,
  base: readonly PropertyKey[] = [],
): string[] {
  const lines = issueLines(issues, prefix, schema, base);
  const meant = new Set(lines.flatMap((l) => (l.meant === undefined ? [] : [l.meant])));
  return lines.filter((l) => l.missing === undefined || !meant.has(l.missing)).map((l) => l.text);
}

function issueLines(
  issues: readonly z.core.$ZodIssue[],
  prefix: string,
  schema: z.ZodType | undefined,
  base: readonly PropertyKey[],
): Line[] {
  const lines: Line[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = schema === undefined ? [] : knownKeysAt(schema, [...base, ...issue.path]);
      for (const key of issue.keys) {
        const meant = suggest(key, known);
        lines.push({
          text: `${formatPath([...issue.path, key], prefix)}: unknown key${didYouMean(key, known)}`,
          ...(meant === undefined ? {} : { meant: formatPath([...issue.path, meant], prefix) }),
        });
      }
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the branch that got furthest (the one with the deepest issue path).
      const best = [...issue.errors].sort((a, b) => depth(b) - depth(a))[0]!;
      lines.push(...issueLines(best, formatPath(issue.path, prefix), schema, [...base, ...issue.path]));
    } else if (issue.code === 'invalid_type') {
      lines.push(typeLine(issue, prefix));
    } else if ((issue.code === 'too_big' || issue.code === 'too_small') && ZOD_SIZE_MESSAGE.test(issue.message)) {
      lines.push({ text: `${formatPath(issue.path, prefix) || '(root)'}: ${sizeText(issue)}` });
    } else {
      const where = formatPath(issue.path, prefix) || '(root)';
      const input = (issue as { input?: unknown }).input;
      const hint =
        issue.code === 'invalid_value' && typeof input === 'string'
          ? didYouMean(
              input,
              issue.values.filter((v): v is string => typeof v === 'string'),
            )
          : '';
      lines.push({ text: `${where}: ${lowerFirst(issue.message)}${hint}` });
    }
  }
  return lines;
}

/** A wrong type in plain words, a missing key as such (the path names it); a schema's own message is kept. */
function typeLine(issue: z.core.$ZodIssue, prefix: string): Line {
  const where = formatPath(issue.path, prefix) || '(root)';
  const m = ZOD_TYPE_MESSAGE.exec(issue.message);
  if (m === null) return { text: `${where}: ${lowerFirst(issue.message)}` };
  const [, expected = '', received = ''] = m;
  if (received === 'undefined' && issue.path.length > 0) return { text: `${where}: missing key`, missing: where };
  return { text: `${where}: expected ${TYPE_WORDS[expected] ?? expected}, got ${TYPE_WORDS[received] ?? received}` };
}

/** A bound in plain words: `expected at most 1`, `expected at least 1 entry`. */
function sizeText(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall): string {
  const big = issue.code === 'too_big';
  const bound = Number(big ? issue.maximum : issue.minimum);
  const what = issue.inclusive === false ? (big ? 'below' : 'above') : big ? 'at most' : 'at least';
  const unit = SIZE_UNITS[issue.origin];
  return `expected ${what} ${bound}${unit === undefined ? '' : ` ${unit[bound === 1 ? 0 : 1]}`}`;
}

function depth(issues: readonly z.core.$ZodIssue[]): number {
  return Math.max(0, ...issues.map((i) => i.path.length));
}

/** A config that failed validation; `errors` holds one line per problem. */
export class ConfigError extends SwitchboardError {
  readonly errors: readonly string[];
  constructor(file: string, errors: readonly string[]) {
    super(
      'SWB_ERR_CONFIG',
      `config ${file}: ${errors.length} error${errors.length === 1 ? '' : 's'}\n  ${errors.join('\n  ')}`,
    );
    this.errors = errors;
  }
}

/**
 * The problems an error reports, one per line: a ConfigError's list (or any error's `errors`
 * list, as the bfe book's compile issues carry), else its message split at newlines.
 */
export function problemLines(e: Error): string[] {
  const listed = (e as { errors?: unknown }).errors;
  if (Array.isArray(listed) && listed.every((l) => typeof l === 'string')) return listed as string[];
  return e.message.split('\n').filter((l) => l.trim() !== '');
}
