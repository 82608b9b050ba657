/**
 * The advanced rules of one product (reference bfe.md §3.3, §4.2b): an ordered list of
 * condition → cluster; the first condition that holds wins. Conditions are compiled once per
 * snapshot by the condition language (src/condition/).
 */
import type { Candidates, Request } from '../../src/contracts/types.ts';

/** One compiled advanced rule. */
export interface AdvancedRule {
  /** Position in the product's `rules` list. */
  readonly index: number;
  /** Config path (`products.web.rules[2]`). */
  readonly rule: string;
  readonly cond: string;
  readonly cluster: string;
  readonly match: (req: Request) => boolean;
  readonly candidates: Candidates;
}

/** The first rule whose condition holds for the request, or undefined. */
export function firstMatch(rules: readonly AdvancedRule[], req: Request): AdvancedRule | undefined {
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    if (r.match(req)) return r;
  }
  return undefined;
}
