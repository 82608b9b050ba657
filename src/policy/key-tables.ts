/**
 * The key tables of a rule set's counters, by rule (issue 42 item 5): how many keys each rule's
 * counters hold now (`switchboard_policy_keys{policy}`, `GET /policies`), and which rules count
 * at all (`PolicySet.explain` never asks those for a decision, which would take a token or a
 * slot).
 *
 * 1. A counter's key in its `CounterStore` is `<kind> <rule identity> <spec>` (counters.ts,
 *    shared-counters.ts), and a rule's identity (`name#hash`) has no space: the rule of a
 *    counter is read off its key.
 * 2. A counter's `size` is its key table now: the GCRA keys remembered (bounded by `maxKeys`),
 *    the in-flight keys with a slot held. The shared store's counters read the shared memory,
 *    so on the worker panel the main thread sees every thread's keys.
 */
import type { CounterStore } from './counters.ts';

/** A rule as far as its counters go. */
export interface CountingRule {
  readonly name: string;
  readonly identity: string;
}

/** The rule identity a store key belongs to (`rate <identity> …`, `concurrency <identity> …`). */
function identityOf(key: string): string | undefined {
  const start = key.indexOf(' ');
  const end = key.indexOf(' ', start + 1);
  return start < 0 ? undefined : key.slice(start + 1, end < 0 ? undefined : end);
}

/** Keys held by each counting rule's counters, by rule name; a rule without counters is absent. */
export function ruleKeySizes(store: CounterStore, rules: readonly CountingRule[]): Map<string, number> {
  const byIdentity = new Map<string, number>();
  for (const [key, counter] of store.entries()) {
    const identity = identityOf(key);
    if (identity !== undefined) byIdentity.set(identity, (byIdentity.get(identity) ?? 0) + counter.size);
  }
  const sizes = new Map<string, number>();
  for (const rule of rules) {
    const n = byIdentity.get(rule.identity);
    if (n !== undefined) sizes.set(rule.name, n);
  }
  return sizes;
}

/** The identities of the rules whose policy asked the store for a counter. */
export function countingIdentities(store: CounterStore): Set<string> {
  const out = new Set<string>();
  for (const [key] of store.entries()) {
    const identity = identityOf(key);
    if (identity !== undefined) out.add(identity);
  }
  return out;
}
