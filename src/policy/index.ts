/** The policy rule set (issue 42): schema, compile, the immutable set (see README.md). */

export {
  actionSchema,
  type PoliciesConfig,
  type PolicyRuleConfig,
  policiesSchema,
  policyRuleSchema,
} from '../config/policies.ts';
export { makeAnswer, withHeaders } from './answer.ts';
export { type CompileOptions, compilePolicies } from './compile.ts';
export { type CounterStore, LocalCounters, ScopedCounters } from './counters.ts';
export { PolicyPointError, PolicyRuleError } from './errors.ts';
export { joinHolds, PASS, type PolicyOutcome } from './outcome.ts';
export { type CompiledRule, PolicySet } from './policy-set.ts';
export { SharedCounters, type SharedCountersOptions, type SharedCountersState } from './shared-counters.ts';
export { processClock } from './shared-counters-clock.ts';
