/**
 * The address book's own steps in a routing explanation: a book with an `explain(request)`
 * method (the bfe family: address-books/bfe/explain.ts) says how it found the product and which
 * basic or advanced rule matched; it is read structurally, so any book may offer the same shape.
 *
 * 1. `bookSteps` asks the book (undefined for a book without `explain`).
 * 2. `stepsOf` turns the steps into one line each (`basic rule: …`, `advanced rules: …`).
 * 3. `ruleOf` names the rule that matched with its kind (`basic`, `advanced`, else `book`).
 */
import type { AddressBook, Candidates, Request } from '../../src/contracts/types.ts';

/** The rule that matched: `where` is its config path (or the book's rule id). */
export interface ExplainedRuleMatch {
  readonly where: string;
  readonly kind: 'basic' | 'advanced' | 'book';
  readonly detail: string | undefined;
}

/** The bfe-family explanation (address-books/bfe/explain.ts), read structurally. */
export interface BookSteps {
  readonly product?:
    | { name: string; via: string; pattern: string; tag?: string | undefined; where: string }
    | undefined;
  readonly basic?:
    | { matched: boolean; hostPattern?: string; pathPattern?: string; rule?: string; cluster?: string; note: string }
    | undefined;
  readonly advanced?:
    | { evaluated: number; matched?: { index: number; rule: string; cond: string; cluster: string } | undefined }
    | undefined;
  readonly reason?: string | undefined;
}

/** Step 1: the book's own explanation of `request`, if it has one. */
export function bookSteps(book: AddressBook, request: Request): BookSteps | undefined {
  const explain = (book as { explain?: (r: Request) => unknown }).explain;
  if (typeof explain !== 'function') return undefined;
  const e = explain.call(book, request);
  return e !== null && typeof e === 'object' ? (e as BookSteps) : undefined;
}

/** Step 2: one line per step. */
export function stepsOf(s: BookSteps | undefined): string[] {
  const lines: string[] = [];
  const b = s?.basic;
  if (b !== undefined) {
    lines.push(
      b.matched
        ? `basic rule: ${b.rule} host ${b.hostPattern} path ${b.pathPattern} → ${b.cluster} (${b.note})`
        : `basic rules: ${b.note}`,
    );
  }
  const a = s?.advanced;
  if (a?.matched !== undefined) lines.push(`advanced rule: ${a.matched.rule} ${a.matched.cond} → ${a.matched.cluster}`);
  else if (a !== undefined) lines.push(`advanced rules: ${a.evaluated} evaluated, none matched`);
  return lines;
}

/** Step 3: the rule that matched, for candidates `c`. */
export function ruleOf(s: BookSteps | undefined, c: Candidates): ExplainedRuleMatch {
  const a = s?.advanced?.matched;
  if (a !== undefined) return { where: c.rule, kind: 'advanced', detail: a.cond };
  const b = s?.basic;
  if (b?.matched === true && b.rule !== undefined) {
    return { where: c.rule, kind: 'basic', detail: `host ${b.hostPattern} path ${b.pathPattern}` };
  }
  return { where: c.rule, kind: 'book', detail: undefined };
}
