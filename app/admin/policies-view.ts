/**
 * `GET /policies`: the `policies:` rules of the running config, in order, each with its name,
 * its `use:`, the point it runs at, its `when:` and how often it fired by action since start
 * (`{ close: 3 }`; from the metrics, app/metrics/policy-actions.ts).
 */
import type { Engine } from '../../src/panel/contract.ts';
import type { PolicyActions } from '../metrics/policy-actions.ts';

/** One rule as `GET /policies` lists it. */
export interface PolicyView {
  readonly name: string;
  readonly use: string;
  readonly point: string;
  readonly when: string | undefined;
  readonly actions: Record<string, number>;
}

/** The rules of `engine` with their counts. */
export function policiesView(engine: Engine, actions: PolicyActions): { version: string; policies: PolicyView[] } {
  const written = engine.loaded.config.policies;
  return {
    version: engine.version,
    policies: engine.policies.rules.map((rule, i) => ({
      name: rule.name,
      use: written[i]?.use ?? rule.policy,
      point: rule.point,
      when: written[i]?.when,
      actions: actions.of(rule.name),
    })),
  };
}
