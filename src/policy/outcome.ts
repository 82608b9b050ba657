/**
 * What the rule set answers for one point: the rule that fired and its verdict, or a pass. An
 * outcome is also the `Hold` of every slot the rules that let it through took: the caller
 * calls `release()` when the request, stream or connection ends (every end path; a second call
 * does nothing).
 */
import type { Hold, PolicyVerdict } from '../contracts/policy.ts';

/** The result of one point. */
export interface PolicyOutcome extends Hold {
  /** The rule whose verdict this is; undefined when every rule let it through. */
  readonly rule: string | undefined;
  /** The policy of that rule (`block`, `rate-limit`, a module's name). */
  readonly policy: string | undefined;
  readonly verdict: PolicyVerdict;
}

const PASS_VERDICT: PolicyVerdict = Object.freeze({ action: 'pass' });

/** Let through, nothing held: the one object every pass without a hold returns. */
export const PASS: PolicyOutcome = Object.freeze({
  rule: undefined,
  policy: undefined,
  verdict: PASS_VERDICT,
  release(): void {},
});

/** A rule fired (close or answer); it holds nothing (slots taken before it were given back). */
export class Fired implements PolicyOutcome {
  readonly rule: string;
  readonly policy: string;
  readonly verdict: PolicyVerdict;
  constructor(rule: string, policy: string, verdict: PolicyVerdict) {
    this.rule = rule;
    this.policy = policy;
    this.verdict = verdict;
  }
  release(): void {}
}

/** Let through holding slots: `release()` gives each back once. */
export class Held implements PolicyOutcome {
  readonly rule = undefined;
  readonly policy = undefined;
  readonly verdict = PASS_VERDICT;
  #holds: Hold[] | undefined;
  constructor(holds: Hold[]) {
    this.#holds = holds;
  }
  release(): void {
    const holds = this.#holds;
    if (holds === undefined) return;
    this.#holds = undefined;
    for (const h of holds) h.release();
  }
}

/**
 * The holds of two points as one (`a` from an earlier point, `b` the outcome of a later one):
 * `b` alone when `a` holds nothing, `a` alone when `b` is the plain `PASS`.
 */
export function joinHolds(a: Hold | undefined, b: PolicyOutcome): Hold {
  if (a === undefined || a === PASS) return b;
  if (b === PASS) return a;
  return new Held([a, b]);
}
