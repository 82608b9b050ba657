/**
 * Where `rate-limit` and `in-flight` count (issue 43): `scope: local` (default) in this router,
 * `scope: fleet` summed across the fleet through Redis (app/fleet/limits-*.ts, docs/fleet.md
 * "Limits"), and `failMode` for while Redis is out of reach.
 *
 * 1. `failMode: open` (default): the rule counts locally with its share of the limit (÷ live
 *    members) and lets through what that allows.
 * 2. `failMode: closed`: the counter says it is `unavailable`; the rule refuses with 503 at the
 *    request points (close at `connection`, or when the rule's `action:` is close).
 * 3. `failMode` means something only with `scope: fleet`; with `local` it is refused.
 */
import { z } from 'zod';
import type { CounterScope, PolicyPoint, PolicyVerdict, RuleAction } from '../../src/contracts/policy.ts';
import { makeAnswer } from '../../src/policy/answer.ts';
import { refusalOf } from './refusal.ts';

/** The scope options shared by rate-limit and in-flight. */
export const scopeOptions = {
  scope: z.enum(['local', 'fleet']).default('local'),
  /** With `scope: fleet`: what the rule does while Redis cannot be reached; default `open`. */
  failMode: z.enum(['open', 'closed']).optional(),
};

/** The parsed scope options. */
export interface ScopeSpec {
  readonly scope: 'local' | 'fleet';
  readonly failMode?: 'open' | 'closed' | undefined;
}

/** Refines an options schema: step 3. */
export function checkScope(o: ScopeSpec, ctx: z.RefinementCtx): void {
  if (o.scope === 'local' && o.failMode !== undefined)
    ctx.addIssue({ code: 'custom', path: ['failMode'], message: 'failMode is for scope: fleet' });
}

/** The counter scope of the options (what `PolicyCounters` is asked with). */
export function counterScope(o: ScopeSpec): CounterScope {
  return { scope: o.scope, failMode: o.failMode ?? 'open' };
}

const UNAVAILABLE = makeAnswer({ status: 503, body: 'limit unavailable\n' });

/** Step 2: the refusal while a closed-failing fleet counter is unavailable. */
export function unavailableRefusal(action: RuleAction | undefined, point: PolicyPoint): PolicyVerdict {
  return refusalOf(action?.action === 'close' ? action : undefined, point, UNAVAILABLE);
}
