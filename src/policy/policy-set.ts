/**
 * The compiled, immutable rule set of one snapshot: for a point and its context, the first rule
 * that fires and its verdict.
 *
 * 1. Rules are kept per point in config order. A point with no rule returns `PASS` after one
 *    length check: a feature not configured costs nothing, and allocates nothing.
 * 2. For each rule of the point: the `products:`/`clusters:` selectors (a Set lookup), then the
 *    compiled `when:` (at `connection`/`handshake` over a head-less request made once per
 *    call, only when a rule has a `when`), then the policy's own decision.
 * 3. A decision `undefined` or `pass` goes on to the next rule; a `pass` with a hold keeps the
 *    hold. The first `close` or `answer` fires: the holds taken so far are given back at once
 *    and the outcome names the rule. No rule fired: `PASS`, or a `Held` outcome that gives the
 *    holds back on `release()`.
 * 4. `finish` tells every policy that observes ends; it decides nothing.
 * 5. Lifecycle (STYLE §5): `start()` runs each policy's I/O (list files); a failure closes what
 *    started, in reverse. `close()` closes every policy. Counters live in the `CounterStore`,
 *    not in the set, so the next set takes them over by rule identity.
 */

import type { Logger } from 'pino';
import type { Condition } from '../condition/index.ts';
import type {
  ConnectionContext,
  FinishContext,
  HandshakeContext,
  Hold,
  PointContext,
  PolicyInstance,
  PolicyPoint,
  PolicyVerdict,
  RequestContext,
  RoutedContext,
} from '../contracts/policy.ts';
import type { Request } from '../contracts/types.ts';
import { ConnectionRequest } from './connection-request.ts';
import type { CounterStore } from './counters.ts';
import { explainRules, type RuleExplanation } from './explain.ts';
import { countingIdentities } from './key-tables.ts';
import { Fired, Held, PASS, type PolicyOutcome } from './outcome.ts';

/** One compiled rule. */
export interface CompiledRule {
  readonly name: string;
  /** The policy's name. */
  readonly policy: string;
  readonly point: PolicyPoint;
  /** Name + hash of the definition: what keeps its counters across reloads. */
  readonly identity: string;
  readonly when: Condition | undefined;
  readonly products: ReadonlySet<string> | undefined;
  readonly clusters: ReadonlySet<string> | undefined;
  readonly instance: PolicyInstance;
}

/** A rule at its point: `decide` calls the policy's method for that point. */
export interface RuleAt<C extends PointContext> extends CompiledRule {
  readonly decide: (ctx: C) => PolicyVerdict | undefined;
}

/** The rules of each point, in config order. */
export interface RulesByPoint {
  readonly connection: readonly RuleAt<ConnectionContext>[];
  readonly handshake: readonly RuleAt<HandshakeContext>[];
  readonly request: readonly RuleAt<RequestContext>[];
  readonly routed: readonly RuleAt<RoutedContext>[];
}

/** The rule set of one snapshot. */
export class PolicySet {
  /** Every rule in config order (for `GET /policies`, the dashboard, `switchboard route`). */
  readonly rules: readonly CompiledRule[];
  readonly counters: CounterStore;
  readonly #at: RulesByPoint;
  readonly #observers: readonly CompiledRule[];
  /** Where a throwing `finish` is reported (given to `start`). */
  #logger: Logger | undefined;

  constructor(rules: readonly CompiledRule[], at: RulesByPoint, counters: CounterStore) {
    this.rules = rules;
    this.#at = at;
    this.counters = counters;
    this.#observers = rules.filter((r) => typeof r.instance.finish === 'function');
  }

  /** True when some rule runs at `point` (a panel may skip building its context otherwise). */
  has(point: PolicyPoint): boolean {
    return this.#at[point].length > 0;
  }

  connection(ctx: ConnectionContext): PolicyOutcome {
    const rules = this.#at.connection;
    return rules.length === 0 ? PASS : run(rules, ctx, undefined);
  }

  handshake(ctx: HandshakeContext): PolicyOutcome {
    const rules = this.#at.handshake;
    return rules.length === 0 ? PASS : run(rules, ctx, undefined);
  }

  request(ctx: RequestContext): PolicyOutcome {
    const rules = this.#at.request;
    return rules.length === 0 ? PASS : run(rules, ctx, ctx.request);
  }

  routed(ctx: RoutedContext): PolicyOutcome {
    const rules = this.#at.routed;
    return rules.length === 0 ? PASS : run(rules, ctx, ctx.request);
  }

  /**
   * What the rules at `point` would do for `ctx`, without side effects (explain.ts): those its
   * selectors and `when:` select, each `fires` (with the verdict), `applies` (a counting rule:
   * fires only over its limit) or `passes`. At `request` and `routed`, `ctx.request` is the
   * request; at `routed`, `product` and `cluster` are the route's.
   */
  explain(point: PolicyPoint, ctx: PointContext): RuleExplanation[] {
    const rules = this.#at[point] as readonly RuleAt<PointContext>[];
    if (rules.length === 0) return [];
    const counting = countingIdentities(this.counters);
    const request = point === 'request' || point === 'routed' ? ctx.request : undefined;
    return explainRules(rules, ctx, request, (identity) => counting.has(identity));
  }

  /**
   * True when some rule's policy observes ends (`finish`): a panel builds the finish context
   * only then, so ends cost nothing when no policy observes them.
   */
  get observes(): boolean {
    return this.#observers.length > 0;
  }

  /**
   * A request, stream or connection ended: tell the policies that observe it. A `finish` that
   * throws is logged and the others are still told: an end path (giving slots and the engine
   * back) never stops on a policy's bug.
   */
  finish(ctx: FinishContext): void {
    const observers = this.#observers;
    for (let i = 0; i < observers.length; i++) {
      const rule = observers[i] as CompiledRule;
      try {
        rule.instance.finish?.(ctx);
      } catch (err) {
        this.#logger?.error(
          { err, policy: rule.name, use: rule.policy },
          'policy finish failed (its error is ignored)',
        );
      }
    }
  }

  /** Runs each policy's I/O (`logger`: where a throwing `finish` is reported from then on). */
  async start(logger?: Logger): Promise<void> {
    this.#logger = logger;
    const started: PolicyInstance[] = [];
    try {
      for (const rule of this.rules) {
        await rule.instance.start?.();
        started.push(rule.instance);
      }
    } catch (e) {
      for (const instance of started.reverse()) await instance.close?.().catch(() => {});
      throw e;
    }
  }

  async close(): Promise<void> {
    for (const rule of [...this.rules].reverse()) await rule.instance.close?.();
  }
}

/** Steps 2 and 3 over the rules of one point. */
function run<C extends PointContext>(rules: readonly RuleAt<C>[], ctx: C, request: Request | undefined): PolicyOutcome {
  let view = request;
  let holds: Hold[] | undefined;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as RuleAt<C>;
    if (rule.products !== undefined && !rule.products.has(ctx.product ?? '')) continue;
    if (rule.clusters !== undefined && !rule.clusters.has(ctx.cluster ?? '')) continue;
    if (rule.when !== undefined) {
      view ??= new ConnectionRequest(ctx.connection);
      if (!rule.when(view)) continue;
    }
    const verdict = rule.decide(ctx);
    if (verdict === undefined) continue;
    if (verdict.action === 'pass') {
      if (verdict.hold === undefined) continue;
      if (holds === undefined) holds = [verdict.hold];
      else holds.push(verdict.hold);
      continue;
    }
    if (holds !== undefined) for (const h of holds) h.release();
    return new Fired(rule.name, rule.policy, verdict);
  }
  return holds === undefined ? PASS : new Held(holds);
}
