/**
 * Which rules of a point would act on a request, found without side effects (issue 42 item 5):
 * what `switchboard route` and the dashboard's explainer say (`PolicySet.explain`).
 *
 * 1. The rules of the point in config order, as `policy-set.ts` runs them: the
 *    `products:`/`clusters:` selectors, then `when:` (over a head-less request at
 *    `connection`/`handshake`). A rule they do not select is left out.
 * 2. A rule whose policy counts (it asked the store for a counter: rate-limit, in-flight, a
 *    custom policy counting through its `PolicyCounters`) is not asked: asking would take a
 *    token or an in-flight slot. It `applies`: it fires only over its limit, which depends on
 *    traffic, not on this request.
 * 3. Any other rule is asked for its decision (block, respond, redirect: they read the request
 *    and their own options only). `fires` with the verdict (close, or the answer with its
 *    status and headers), or `passes` when the policy lets this request through (an address
 *    not on the list, a redirect to the URL it already has). A `pass` with a hold (a custom
 *    policy) gives the hold back at once.
 * 4. The first rule that fires certainly ends the list: the rules after it would not run.
 */
import type { Condition } from '../condition/index.ts';
import type { PointContext, PolicyPoint, PolicyVerdict } from '../contracts/policy.ts';
import type { Request } from '../contracts/types.ts';
import { ConnectionRequest } from './connection-request.ts';

/** A rule at its point as far as explaining goes (policy-set.ts `RuleAt` is one). */
export interface ExplainableRule {
  readonly name: string;
  readonly policy: string;
  readonly point: PolicyPoint;
  readonly identity: string;
  readonly when: Condition | undefined;
  readonly products: ReadonlySet<string> | undefined;
  readonly clusters: ReadonlySet<string> | undefined;
  readonly decide: (ctx: PointContext) => PolicyVerdict | undefined;
}

/** What one selected rule would do. */
export type RuleExplanation = {
  readonly rule: string;
  readonly policy: string;
  readonly point: PolicyPoint;
} & (
  | { readonly outcome: 'fires'; readonly verdict: Exclude<PolicyVerdict, { action: 'pass' }> }
  | { readonly outcome: 'applies' }
  | { readonly outcome: 'passes' }
);

/**
 * Steps 1–4 over `rules` (one point's, in config order) for `ctx`; `counting` says whether a
 * rule's policy counts. `request` is the request at `request`/`routed`, undefined before.
 */
export function explainRules(
  rules: readonly ExplainableRule[],
  ctx: PointContext,
  request: Request | undefined,
  counting: (identity: string) => boolean,
): RuleExplanation[] {
  const out: RuleExplanation[] = [];
  let view = request;
  for (const rule of rules) {
    if (rule.products !== undefined && !rule.products.has(ctx.product ?? '')) continue;
    if (rule.clusters !== undefined && !rule.clusters.has(ctx.cluster ?? '')) continue;
    if (rule.when !== undefined) {
      view ??= new ConnectionRequest(ctx.connection);
      if (!rule.when(view)) continue;
    }
    const named = { rule: rule.name, policy: rule.policy, point: rule.point };
    if (counting(rule.identity)) {
      out.push({ ...named, outcome: 'applies' });
      continue;
    }
    const verdict = rule.decide(ctx);
    if (verdict === undefined || verdict.action === 'pass') {
      if (verdict?.hold !== undefined) verdict.hold.release();
      out.push({ ...named, outcome: 'passes' });
      continue;
    }
    out.push({ ...named, outcome: 'fires', verdict });
    break;
  }
  return out;
}
