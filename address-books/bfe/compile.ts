/**
 * RoutingTable → Snapshot (reference bfe.md §3.8 cross-checks, §8 atomic reload):
 *
 * 1. validate the plain data against `routingTableSchema` (every problem, with its path;
 *    `validate.ts`);
 * 2. compile every cluster (sub-cluster and backend weights must be positive);
 * 3. fill the host table and VIP table (a host or VIP under two products is an error;
 *    `host-fill.ts`);
 * 4. build each product's basic rule tree and compile its advanced rules' conditions,
 *    checking that every cluster they name exists;
 * 5. throw one SwitchboardError listing everything found, or return the snapshot.
 *
 * Nothing here touches the current snapshot, so a failed build changes nothing.
 *
 * The steps are one generator (`compileSteps`) that yields between units of work (one product's
 * or one cluster's validation, one cluster, a batch of hosts, one rule). `compileRoutingTable`
 * runs it to the end in one go; `compileRoutingTableSliced` runs it in slices of a few
 * milliseconds with a `setImmediate` between them, so the books that rebuild in the background
 * (sqlite, etcd) never hold the event loop for the whole 10,000-host build (bench/reload-phases.ts
 * measures both). Validation runs per product and per cluster for the same reason; the output is
 * the same table `routingTableSchema` produces.
 *
 * Given the live snapshot (`options.previous`), the unchanged products and clusters are taken
 * from it rather than built again (`reuse.ts`): same snapshot, same errors, far less garbage.
 * Only changed members go through zod (whose parse returns copies); the `products` and
 * `clusters` records themselves are not copied when they are plain records, and are the
 * previous table's when every member is unchanged (`validate.ts`), in which case the host and
 * VIP tables are the previous ones too (`host-fill.ts`).
 */

import { isSwitchboardError } from '../../src/base/errors.ts';
import { didYouMean } from '../../src/base/suggest.ts';
import { checkNamedConditions, compileCondition } from '../../src/condition/index.ts';
import type { Request } from '../../src/contracts/types.ts';
import { runSliced, runToEnd, SLICE_MS, type Steps } from '../lib/sliced.ts';
import type { AdvancedRule } from './advanced-rules.ts';
import { ADVANCED_MODE, BasicRuleTree, type PathTarget, parsePathPattern } from './basic-rules.ts';
import { type CompiledCluster, candidatesFor, compileCluster } from './clusters.ts';
import { at, entry, fillHosts } from './host-fill.ts';
import { type HostEntry, HostTable, normaliseConfigHost } from './host-table.ts';
import { Issues } from './issues.ts';
import { type BuildMemo, deepEqual, mayReadHostTags } from './reuse.ts';
import type { ProductConfig, RoutingTable } from './routing-table.ts';
import { type ProductRoutes, Snapshot } from './snapshot.ts';
import { type Names, validate } from './validate.ts';

/** Where the table came from, for error messages. */
export interface CompileOptions {
  /** Outer label of every error (`load routes.yaml`). */
  readonly source?: string;
  /** Config path prefix of the table's keys (`addressBook`); '' for a file of its own. */
  readonly pathPrefix?: string;
  /** Clock for time conditions (tests). */
  readonly now?: () => number;
  /**
   * The snapshot serving now: unchanged products and clusters are taken from it instead of
   * built again (`reuse.ts`). The result is the same snapshot or the same error either way.
   * Input objects must not be changed after they were compiled.
   */
  readonly previous?: Snapshot | undefined;
}

interface Ctx {
  readonly issues: Issues;
  readonly prefix: string;
  readonly clusters: ReadonlyMap<string, CompiledCluster>;
  hosts: HostTable;
  readonly table: RoutingTable;
  readonly now: (() => number) | undefined;
  /** What may be taken from the previous snapshot (`reuse.ts`); undefined: build everything. */
  readonly reuse: Reuse | undefined;
  /** Set when a compiled rule may read host tags (`mayReadHostTags`). */
  readsHostTags: boolean;
}

/** The previous snapshot and what of this build's input is unchanged from its build. */
interface Reuse {
  readonly previous: Snapshot;
  /** Products and clusters whose validated object is the previous one. */
  readonly products: Names;
  readonly clusters: Names;
  /** Same prefix, clock and named conditions: compiled rules can be taken over. */
  readonly rules: boolean;
  /** The host and VIP tables are the previous ones (`host-fill.ts`, `sameHostTable`). */
  readonly sameHosts: boolean;
}

/** Validates and compiles a routing table; throws SWB_ERR_CONFIG listing every problem. */
export function compileRoutingTable(input: unknown, options: CompileOptions = {}): Snapshot {
  return runToEnd(compileSteps(input, options));
}

/**
 * `compileRoutingTable` in slices of about `sliceMs` of work with a `setImmediate` between them:
 * the same snapshot or the same error, without holding the event loop for the whole build.
 */
export function compileRoutingTableSliced(
  input: unknown,
  options: CompileOptions = {},
  sliceMs = SLICE_MS,
): Promise<Snapshot> {
  return runSliced(compileSteps(input, options), sliceMs);
}

/** The compile, one unit of work per `yield` (see the file header). */
export function* compileSteps(input: unknown, options: CompileOptions = {}): Steps<Snapshot> {
  const prefix = options.pathPrefix ?? '';
  const source = options.source ?? '';
  const issues = new Issues();
  const prev = options.previous?.memo;
  const usable = prev !== undefined && prev.prefix === prefix ? prev : undefined;
  const valid = yield* validate(input, prefix, issues, usable && options.previous);
  issues.throwIfAny(source);
  const { table, memo } = valid;
  const rules = usable !== undefined && usable.now === options.now && deepEqual(table.conditions, usable.conditions);
  const reuse: Reuse | undefined =
    usable === undefined
      ? undefined
      : {
          previous: options.previous!,
          ...valid.reused,
          rules,
          sameHosts: sameHostTable(table, rules, options.previous!),
        };
  const clusters = new Map<string, CompiledCluster>();
  const ctx: Ctx = {
    issues,
    prefix,
    clusters,
    hosts: new HostTable(),
    table,
    now: options.now,
    reuse,
    readsHostTags: false,
  };
  for (const [name, cfg] of Object.entries(table.clusters)) {
    const same = reuse?.clusters.has(name) ? reuse.previous.clusters.get(name) : undefined;
    if (same !== undefined) {
      clusters.set(name, same);
      yield;
      continue;
    }
    const local = new Issues();
    clusters.set(name, compileCluster(name, cfg, local));
    for (const m of local.list) issues.add('', at(ctx, m));
    yield;
  }
  checkConditions(ctx);
  const vips = yield* fillHosts(ctx);
  const products = new Map<string, ProductRoutes>();
  for (const [name, product] of Object.entries(table.products)) {
    const same = reusableRoutes(ctx, name, product);
    products.set(name, same ?? (yield* compileProduct(ctx, name, product)));
    if (same !== undefined) yield;
  }
  let defaultProduct: HostEntry | undefined;
  if (table.defaultProduct !== undefined) {
    const where = at(ctx, 'defaultProduct');
    if (!(table.defaultProduct in table.products)) {
      const hint = didYouMean(table.defaultProduct, Object.keys(table.products));
      issues.add(where, `product ${table.defaultProduct} does not exist${hint}`);
    }
    defaultProduct = entry(table.defaultProduct, 'default', undefined, table.defaultProduct, where);
  }
  issues.throwIfAny(source);
  const built: BuildMemo = {
    prefix,
    now: options.now,
    conditions: table.conditions,
    readsHostTags: ctx.readsHostTags,
    ...memo,
  };
  return new Snapshot({ table, hosts: ctx.hosts, vips, defaultProduct, products, clusters, memo: built });
}

/**
 * True when this build's host and VIP tables are provably the previous snapshot's: the same
 * validated products record (every product the previous object, in the same order), the same
 * default product, the same named conditions and no rule of the previous build reading host
 * tags. The tables are then shared, not copied and patched.
 */
function sameHostTable(table: RoutingTable, rules: boolean, previous: Snapshot): boolean {
  const was = previous.table;
  return (
    rules &&
    table.products === was.products &&
    table.defaultProduct === was.defaultProduct &&
    !previous.memo.readsHostTags
  );
}

function checkConditions(ctx: Ctx): void {
  if (ctx.table.conditions === undefined) return;
  try {
    checkNamedConditions(ctx.table.conditions, at(ctx, 'conditions'));
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    ctx.issues.add('', e.message);
  }
}

/**
 * The previous snapshot's routes of an unchanged product, when everything they were compiled
 * from is unchanged too (`reuse.ts`); undefined when the product must be compiled.
 */
function reusableRoutes(ctx: Ctx, name: string, product: ProductConfig): ProductRoutes | undefined {
  const reuse = ctx.reuse;
  if (reuse === undefined || !reuse.rules || !reuse.products.has(name)) return undefined;
  const prev = reuse.previous;
  const sameCluster = (c: string) => {
    if (c === ADVANCED_MODE) return true;
    const old = prev.clusters.get(c);
    return old !== undefined && ctx.clusters.get(c) === old;
  };
  for (const rule of product.basicRules ?? []) if (!sameCluster(rule.cluster)) return undefined;
  for (const rule of product.rules ?? []) {
    if (!sameCluster(rule.cluster) || mayReadHostTags(rule.cond, ctx.table.conditions)) return undefined;
  }
  return prev.products.get(name);
}

function clusterOf(ctx: Ctx, cluster: string, where: string): CompiledCluster | undefined {
  const c = ctx.clusters.get(cluster);
  if (c === undefined)
    ctx.issues.add(where, `cluster ${cluster} does not exist${didYouMean(cluster, ctx.clusters.keys())}`);
  return c;
}

function* compileProduct(ctx: Ctx, name: string, product: ProductConfig): Steps<ProductRoutes> {
  const base = `products.${name}`;
  const basic = product.basicRules === undefined ? undefined : new BasicRuleTree();
  for (const [i, rule] of (product.basicRules ?? []).entries()) {
    const where = `${base}.basicRules[${i}]`;
    const advanced = rule.cluster === ADVANCED_MODE;
    const cluster = advanced ? undefined : clusterOf(ctx, rule.cluster, at(ctx, `${where}.cluster`));
    const candidates = cluster === undefined ? undefined : candidatesFor(cluster, name, where);
    addBasicRule(ctx, basic!, where, rule.hosts ?? ['*'], rule.paths ?? ['*'], rule.cluster, candidates);
    yield;
  }
  const rules: AdvancedRule[] = [];
  for (const [index, rule] of (product.rules ?? []).entries()) {
    const where = `${base}.rules[${index}]`;
    if (mayReadHostTags(rule.cond, ctx.table.conditions)) ctx.readsHostTags = true;
    const cluster = clusterOf(ctx, rule.cluster, at(ctx, `${where}.cluster`));
    const match = compileCond(ctx, rule.cond, at(ctx, `${where}.cond`));
    yield;
    if (cluster === undefined || match === undefined) continue;
    const candidates = candidatesFor(cluster, name, where);
    rules.push(Object.freeze({ index, rule: where, cond: rule.cond, cluster: rule.cluster, match, candidates }));
  }
  return Object.freeze({ name, basic, rules: Object.freeze(rules) });
}

function addBasicRule(
  ctx: Ctx,
  tree: BasicRuleTree,
  where: string,
  hosts: readonly string[],
  paths: readonly string[],
  cluster: string,
  candidates: PathTarget['candidates'],
): void {
  for (const [hi, rawHost] of hosts.entries()) {
    const n = normaliseConfigHost(rawHost);
    if ('error' in n) {
      ctx.issues.add(at(ctx, `${where}.hosts[${hi}]`), n.error);
      continue;
    }
    const tree2 = tree.pathsFor(n.host);
    for (const [pi, rawPath] of paths.entries()) {
      const key = parsePathPattern(rawPath);
      const pathWhere = at(ctx, `${where}.paths[${pi}]`);
      if (typeof key === 'string') {
        // Report a bad path once, not once per host of the rule.
        if (hi === 0) ctx.issues.add(pathWhere, key);
        continue;
      }
      const clash = tree2.add(key, Object.freeze({ pattern: rawPath, cluster, rule: where, candidates }));
      if (clash !== undefined && clash.rule !== where) {
        ctx.issues.add(pathWhere, `host ${n.host} path ${rawPath} is already routed by ${at(ctx, clash.rule)}`);
      } else if (clash !== undefined) {
        ctx.issues.add(pathWhere, `duplicate host ${n.host} path ${rawPath}`);
      }
    }
  }
}

function compileCond(ctx: Ctx, source: string, where: string): ((req: Request) => boolean) | undefined {
  const named = ctx.table.conditions;
  const hosts = ctx.hosts;
  try {
    return compileCondition(source, {
      ...(named === undefined ? {} : { named }),
      hostTag: (host: string) => hosts.lookup(host)?.tag,
      where,
      ...(ctx.now === undefined ? {} : { now: ctx.now }),
    });
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    ctx.issues.add('', e.message);
    return undefined;
  }
}
