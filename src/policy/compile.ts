/**
 * Compiles the `policies:` list into a `PolicySet`, once per snapshot.
 *
 * 1. Each rule's policy comes from `resolve(use)` (built-in names and module paths are loaded
 *    by the caller beforehand, as books and operators are).
 * 2. `options:` are checked by the policy's own schema; every error names `policies[i].options…`.
 * 3. `when:` is compiled by src/condition/ (linear time) and its needs are found: the latest
 *    point of its primitives (points.ts). `products:`/`clusters:` need `routed`; the policy's
 *    options may need a later point (`needs`).
 * 4. The point: as written (refused, naming the rule, point and primitive, when it is too early
 *    or the policy has no such point), else the earliest point of the policy that knows all of
 *    it. An answer (`action: { respond }`) needs a request point.
 * 5. The identity (name + definition hash) picks the rule's counters in the store, which the
 *    previous set's store hands over for an unchanged rule; a `scope: fleet` rule's come from
 *    `fleetCounters` (counters.ts step 4).
 * 6. `create` (pure) makes the instance; the set is frozen. The caller runs `start()`.
 */
import type { Logger } from 'pino';
import { type Condition, compileCondition } from '../condition/index.ts';
import { formatIssues } from '../config/errors.ts';
import type { PoliciesConfig, PolicyRuleConfig } from '../config/policies.ts';
import type {
  AnyPolicyFactory,
  PointContext,
  PolicyInstance,
  PolicyPoint,
  PolicyVerdict,
  RuleAction,
} from '../contracts/policy.ts';
import { ruleAction } from './action.ts';
import { type CounterStore, LocalCounters, ruleCounters, ScopedCounters } from './counters.ts';
import { PolicyPointError, PolicyRuleError } from './errors.ts';
import { ruleIdentity } from './identity.ts';
import { conditionNeed, laterPoint, pointOrder } from './points.ts';
import { type CompiledRule, PolicySet, type RuleAt, type RulesByPoint } from './policy-set.ts';

/** What compiling needs besides the rules. */
export interface CompileOptions {
  /** The factory of a `use:` value; throws (or returns undefined) for an unknown one. */
  readonly resolve: (use: string) => AnyPolicyFactory | undefined;
  /** Directory of the config file, for relative paths in options. */
  readonly configDir: string;
  /** The set being replaced: its counters carry over for unchanged rules. */
  readonly previous?: PolicySet | undefined;
  /** Where counters live; default: the previous set's store's next, or a fresh local one. */
  readonly counters?: CounterStore;
  /**
   * Where `scope: fleet` rules count (issue 43: the snapshot's view of app/fleet/limits-store.ts,
   * which keeps counters by rule identity across reloads); absent (no `fleet.redis`): such a
   * rule is refused, naming it. The set's `counters` is then a `ScopedCounters` of both.
   */
  readonly fleetCounters?: CounterStore | undefined;
  /** The counters' clock in milliseconds; default `performance.now`. */
  readonly now?: () => number;
  /** The config path of the list, for messages; default `policies`. */
  readonly where?: string;
  /** Where policies report what happens after start (a list file that failed to reload). */
  readonly logger?: Logger;
}

/** Compiles the rules; throws a `PolicyRuleError` (code SWB_ERR_CONFIG) naming the first bad rule. */
export function compilePolicies(rules: PoliciesConfig, options: CompileOptions): PolicySet {
  const base = options.counters ?? options.previous?.counters.next() ?? new LocalCounters();
  const local = base instanceof ScopedCounters ? base.local : base;
  const store = options.fleetCounters === undefined ? local : new ScopedCounters(local, options.fleetCounters);
  const now = options.now ?? (() => performance.now());
  const compiled = rules.map((rule, i) =>
    compileRule(rule, `${options.where ?? 'policies'}[${i}]`, store, now, options),
  );
  store.seal();
  const byPoint: RulesByPoint = {
    connection: rulesAt(compiled, 'connection', (i) => i.connection),
    handshake: rulesAt(compiled, 'handshake', (i) => i.handshake),
    request: rulesAt(compiled, 'request', (i) => i.request),
    routed: rulesAt(compiled, 'routed', (i) => i.routed),
  };
  return new PolicySet(Object.freeze(compiled), byPoint, store);
}

/** The rules at `point`, each with its policy's method for it (checked present at compile). */
function rulesAt<C extends PointContext>(
  rules: readonly CompiledRule[],
  point: PolicyPoint,
  method: (instance: PolicyInstance) => ((ctx: C) => PolicyVerdict | undefined) | undefined,
): readonly RuleAt<C>[] {
  const out: RuleAt<C>[] = [];
  for (const rule of rules) {
    const m = rule.point === point ? method(rule.instance) : undefined;
    if (m !== undefined) out.push(Object.freeze({ ...rule, decide: (ctx: C) => m.call(rule.instance, ctx) }));
  }
  return Object.freeze(out);
}

/** Steps 1–6 for one rule. */
function compileRule(
  rule: PolicyRuleConfig,
  where: string,
  store: CounterStore,
  now: () => number,
  options: CompileOptions,
): CompiledRule {
  const fail = (message: string, cause?: unknown): never => {
    throw new PolicyRuleError(where, rule.name, message, cause === undefined ? undefined : { cause });
  };
  const factory = options.resolve(rule.use) ?? fail(`use: unknown policy ${JSON.stringify(rule.use)}`);
  const parsedOptions = policyOptions(factory, rule, where, fail);
  let when: Condition | undefined;
  let need: { point: PolicyPoint; what: string | undefined } = { point: 'connection', what: undefined };
  if (rule.when !== undefined) {
    const at = `${where} (${rule.name}): when`;
    when = compileCondition(rule.when, { where: at });
    const n = conditionNeed(rule.when, at);
    need = { point: n.point, what: n.primitive };
  }
  const later = (point: PolicyPoint, what: string): void => {
    if (pointOrder(point) > pointOrder(need.point)) need = { point, what };
  };
  if (rule.products !== undefined) later('routed', 'products:');
  if (rule.clusters !== undefined) later('routed', 'clusters:');
  later(factory.needs?.(parsedOptions) ?? factory.points[0] ?? 'connection', `the options of ${factory.name}`);
  let action: RuleAction | undefined;
  if (rule.action !== undefined) {
    if (factory.refuses !== true)
      fail(`action: ${factory.name} answers by its options; action is for refusing policies`);
    action = ruleAction(rule.action);
    if (action.action === 'answer') later('request', 'action: respond');
  }
  const point = rulePoint(rule, factory, need, where);
  const identity = ruleIdentity(rule.name, { ...rule, point });
  let instance: PolicyInstance;
  try {
    instance = factory.create(parsedOptions, {
      rule: rule.name,
      point,
      action,
      configDir: options.configDir,
      where: `${where}.options`,
      counters: ruleCounters(store, identity),
      now,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
  } catch (e) {
    return fail(`${factory.name}: ${e instanceof Error ? e.message : String(e)}`, e);
  }
  if (typeof instance[point] !== 'function') fail(`policy ${factory.name} has no ${point} point`);
  return Object.freeze({
    name: rule.name,
    policy: factory.name,
    point,
    identity,
    when,
    products: rule.products === undefined ? undefined : new Set(rule.products),
    clusters: rule.clusters === undefined ? undefined : new Set(rule.clusters),
    instance,
  });
}

/** Step 2: the options through the policy's schema, errors with their config path. */
function policyOptions(
  factory: AnyPolicyFactory,
  rule: PolicyRuleConfig,
  where: string,
  fail: (message: string) => never,
): unknown {
  if (factory.options === undefined) {
    if (rule.options !== undefined) fail(`options: policy ${factory.name} takes no options`);
    return undefined;
  }
  const parsed = factory.options.safeParse(rule.options ?? {});
  if (!parsed.success) fail(formatIssues(parsed.error.issues, `${where}.options`, factory.options).join('; '));
  return parsed.data;
}

/** Step 4: the written point, checked, or the earliest one that knows what the rule needs. */
function rulePoint(
  rule: PolicyRuleConfig,
  factory: AnyPolicyFactory,
  need: { point: PolicyPoint; what: string | undefined },
  where: string,
): PolicyPoint {
  const points = factory.points;
  if (rule.point !== undefined) {
    if (!points.includes(rule.point))
      throw new PolicyRuleError(
        where,
        rule.name,
        `point: ${factory.name} runs at ${points.join(', ')}, not ${rule.point}`,
      );
    if (pointOrder(rule.point) < pointOrder(need.point))
      throw new PolicyPointError(where, rule.name, rule.point, need.what ?? 'the rule', need.point);
    return rule.point;
  }
  const point = points.find((p) => laterPoint(p, need.point) === p);
  if (point === undefined) {
    const last = points[points.length - 1] ?? 'connection';
    throw new PolicyPointError(where, rule.name, last, need.what ?? 'the rule', need.point);
  }
  return point;
}
