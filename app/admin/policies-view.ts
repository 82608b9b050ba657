/**
 * `GET /policies`: the `policies:` rules of the running config, in order, each with its name,
 * its `use:`, the point it runs at, its `when:`, its `products:`/`clusters:` selectors, how
 * often it fired by action since start (`{ close: 3 }`; from the metrics,
 * app/metrics/policy-actions.ts) and the keys its counters hold now (`keys`; undefined for a
 * rule that counts nothing: block, respond, redirect).
 */
import type { Engine } from '../../src/panel/contract.ts';
import { ruleKeySizes } from '../../src/policy/key-tables.ts';
import type { PolicyActions } from '../metrics/policy-actions.ts';

/** One rule as `GET /policies` lists it. */
export interface PolicyView {
  readonly name: string;
  readonly use: string;
  readonly point: string;
  readonly when: string | undefined;
  readonly products: readonly string[] | undefined;
  readonly clusters: readonly string[] | undefined;
  readonly actions: Record<string, number>;
  /** Keys held by the rule's counters now (rate-limit, in-flight); undefined when it has none. */
  readonly keys: number | undefined;
}

/** The rules of `engine` with their counts. */
export function policiesView(engine: Engine, actions: PolicyActions): { version: string; policies: PolicyView[] } {
  const written = engine.loaded.config.policies;
  const set = engine.policies;
  const keys = ruleKeySizes(set.counters, set.rules);
  return {
    version: engine.version,
    policies: set.rules.map((rule, i) => ({
      name: rule.name,
      use: written[i]?.use ?? rule.policy,
      point: rule.point,
      when: written[i]?.when,
      products: rule.products === undefined ? undefined : [...rule.products],
      clusters: rule.clusters === undefined ? undefined : [...rule.clusters],
      actions: actions.of(rule.name),
      keys: keys.get(rule.name),
    })),
  };
}
