/**
 * Config errors: every problem names its path (`listeners[0].address: expected host:port`).
 */
import type { z } from 'zod';
import { SwitchboardError } from '../base/errors.ts';
import { didYouMean } from '../base/suggest.ts';
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

/**
 * One line per zod issue, each with its full path. With the `schema` that was parsed, an unknown
 * key names the closest known one ("did you mean"); an invalid enum value does so from the
 * issue's own list when the parse kept its input (`{ reportInput: true }`).
 */
export function formatIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix = '',
  schema?: z.ZodType,
  base: readonly PropertyKey[] = [],
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = schema === undefined ? [] : knownKeysAt(schema, [...base, ...issue.path]);
      for (const key of issue.keys)
        lines.push(`${formatPath([...issue.path, key], prefix)}: unknown key${didYouMean(key, known)}`);
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the branch that got furthest (the one with the deepest issue path).
      const best = [...issue.errors].sort((a, b) => depth(b) - depth(a))[0]!;
      lines.push(...formatIssues(best, formatPath(issue.path, prefix), schema, [...base, ...issue.path]));
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
      lines.push(`${where}: ${lowerFirst(issue.message)}${hint}`);
    }
  }
  return lines;
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
