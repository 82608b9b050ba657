/**
 * `switchboard_policy_keys{policy}` (issue 42 item 5): the keys each `policies:` rule's counters
 * hold now (rate-limit: the keys remembered, bounded by `maxKeys`; in-flight: the keys with a
 * slot held), read from the running engine's rule set at scrape time. A rule that counts
 * nothing (block, respond, redirect) has no key table and no series.
 *
 * On the worker panel the counters live in the one shared store of the process: the main
 * thread's view reads the same memory as the threads, so the gauge is the process's.
 */
import { Gauge, type Registry } from 'prom-client';
import { ruleKeySizes } from '../../src/policy/key-tables.ts';
import type { PolicySet } from '../../src/policy/policy-set.ts';

/** Registers the gauge on `registers`, read from `policies()` (the running engine's set) at each scrape. */
export function policyKeyGauge(registers: Registry[], policies: () => PolicySet): void {
  new Gauge({
    name: 'switchboard_policy_keys',
    help: 'Keys held by each policies: rule with counters (rate-limit keys remembered, in-flight keys holding a slot)',
    labelNames: ['policy'],
    registers,
    collect() {
      this.reset();
      const set = policies();
      for (const [policy, n] of ruleKeySizes(set.counters, set.rules)) this.set({ policy }, n);
    },
  });
}
