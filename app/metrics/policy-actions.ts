/**
 * What the `policies:` rules did (issue 42): `switchboard_policy_actions_total{policy,action}`
 * and the same counts by rule for `GET /policies`. Counted from the access records the data
 * path publishes (a connection line, a request line) whose `policy` names the rule that fired,
 * so the worker panel's threads are counted through the events they forward, as every other
 * event metric is.
 *
 * A connection routed per request also names, on its own end record, the first rule that fired
 * on one of its requests (for `log.accessMode: per-connection` lines): that rule was counted
 * with its request, so a connection whose request ends counted a rule is not counted again.
 */
import { Counter, type Registry } from 'prom-client';
import type { AccessRecord } from '../../src/base/log.ts';

/** The most connections remembered as counted by their requests. */
const MAX_OPEN = 100_000;

/** Counts of each action by rule name. */
export class PolicyActions {
  readonly #counter: Counter<'policy' | 'action'>;
  readonly #byRule = new Map<string, Map<string, number>>();
  /** Clients (`ip:port`) of open connections on which a request end counted a rule. */
  readonly #countedOn = new Set<string>();

  constructor(registry: Registry) {
    this.#counter = new Counter({
      name: 'switchboard_policy_actions_total',
      help: 'Connections and requests a policies: rule refused, by rule name and action (close, answer)',
      labelNames: ['policy', 'action'],
      registers: [registry],
    });
  }

  /** A request (or stream) ended; counted when a rule fired on it. */
  noteRequest(record: AccessRecord): void {
    if (!this.#note(record)) return;
    // Bounded: a connection end that never came must not grow it (it only risks a double count).
    if (this.#countedOn.size >= MAX_OPEN) this.#countedOn.clear();
    this.#countedOn.add(record.client);
  }

  /** A connection ended; counted when a rule fired on it, unless its requests counted it already. */
  noteConnection(record: AccessRecord): void {
    if (this.#countedOn.delete(record.client)) return;
    this.#note(record);
  }

  #note(record: AccessRecord): boolean {
    const { policy, action } = record;
    if (policy === undefined || action === undefined) return false;
    this.#counter.inc({ policy, action });
    let counts = this.#byRule.get(policy);
    if (counts === undefined) {
      counts = new Map();
      this.#byRule.set(policy, counts);
    }
    counts.set(action, (counts.get(action) ?? 0) + 1);
    return true;
  }

  /** The counts of `rule` by action since start (`{ close: 3 }`; `{}` when it never fired). */
  of(rule: string): Record<string, number> {
    return Object.fromEntries(this.#byRule.get(rule) ?? []);
  }
}
