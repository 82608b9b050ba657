/**
 * The typed errors of the rule set (STYLE §11): a rule that cannot be compiled, and a rule
 * whose `when:`, selectors or options need more than its point knows. Both carry code
 * `SWB_ERR_CONFIG` and name the rule and its config path in the message.
 */
import { SwitchboardError } from '../base/errors.ts';
import type { PolicyPoint } from '../contracts/policy.ts';

/** A rule refused at compile: `policies[1] (admin-internal): use: unknown policy "blok"…`. */
export class PolicyRuleError extends SwitchboardError {
  /** The rule's name ('' when the rule has none yet). */
  readonly rule: string;
  constructor(where: string, rule: string, message: string, options?: ErrorOptions) {
    super('SWB_ERR_CONFIG', `${where}${rule === '' ? '' : ` (${rule})`}: ${message}`, options);
    this.name = 'PolicyRuleError';
    this.rule = rule;
  }
}

/**
 * A rule that needs more than its point knows: `req_path_prefix_in` at `connection`, a
 * `products:` selector before `routed`, a rate keyed by a header at `connection`.
 */
export class PolicyPointError extends PolicyRuleError {
  readonly point: PolicyPoint;
  /** What needs the later point: a primitive name, `products:`, `clusters:` or `options`. */
  readonly primitive: string;
  /** The earliest point where it is known. */
  readonly needs: PolicyPoint;
  constructor(where: string, rule: string, point: PolicyPoint, primitive: string, needs: PolicyPoint) {
    super(where, rule, `${primitive} needs the ${needs} point or later; the rule runs at ${point}`);
    this.name = 'PolicyPointError';
    this.point = point;
    this.primitive = primitive;
    this.needs = needs;
  }
}
