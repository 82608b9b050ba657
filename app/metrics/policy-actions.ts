/**
 * What the `policies:` rules did (issue 42): `switchboard_policy_actions_total{policy,action}`
 * and the same counts by rule for `GET /policies`. Counted from the access records the data
 * path publishes (a connection line, a request line) whose `policy` names the rule that fired,
 * so the worker panel's threads are counted through the events they forward, as every other
 * event metric is.
 */
import { Counter, type Registry } from 'prom-client';
import type { AccessRecord } from '../../src/base/log.ts';

/** Counts of each action by rule name. */
export class PolicyActions {
  readonly #counter: Counter<'policy' | 'action'>;
  readonly #byRule = new Map<string, Map<string, number>>();

  constructor(registry: Registry) {
    this.#counter = new Counter({
      name: 'switchboard_policy_actions_total',
      help: 'Connections and requests a policies: rule refused, by rule name and action (close, answer)',
      labelNames: ['policy', 'action'],
      registers: [registry],
    });
  }

  /** A connection or request ended; counted when a rule fired on it. */
  note(record: AccessRecord): void {
    const { policy, action } = record;
    if (policy === undefined || action === undefined) return;
    this.#counter.inc({ policy, action });
    let counts = this.#byRule.get(policy);
    if (counts === undefined) {
      counts = new Map();
      this.#byRule.set(policy, counts);
    }
    counts.set(action, (counts.get(action) ?? 0) + 1);
  }

  /** The counts of `rule` by action since start (`{ close: 3 }`; `{}` when it never fired). */
  of(rule: string): Record<string, number> {
    return Object.fromEntries(this.#byRule.get(rule) ?? []);
  }
}
