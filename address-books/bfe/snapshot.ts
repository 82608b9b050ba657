/**
 * One immutable routing snapshot: the plain-data table it came from plus its compiled matcher.
 * `findAddresses` walks reference bfe.md §4 and allocates nothing on a hit:
 *
 *   host table ─miss─► VIP table ─miss─► defaultProduct ─miss─► no route
 *        │ product
 *        ▼
 *   basic rule tree (host → path) ─hit─► Candidates
 *        │ miss or ADVANCED_MODE
 *        ▼
 *   advanced rules, in order ─first match─► Candidates     (none → no route)
 */
import { canonicalIp } from '../../src/base/ip.ts';
import type { BackendEntry, Candidates, Request, RoutesInventory } from '../../src/contracts/types.ts';
import { type AdvancedRule, firstMatch } from './advanced-rules.ts';
import type { BasicRuleTree } from './basic-rules.ts';
import type { CompiledCluster } from './clusters.ts';
import type { HostEntry, HostTable } from './host-table.ts';
import { tableInventory } from './inventory.ts';
import type { BuildMemo } from './reuse.ts';
import type { RoutingTable } from './routing-table.ts';

/** The compiled rules of one product. */
export interface ProductRoutes {
  readonly name: string;
  readonly basic: BasicRuleTree | undefined;
  readonly rules: readonly AdvancedRule[];
}

/** The parts `compile.ts` hands to a snapshot. */
export type SnapshotParts = Pick<
  Snapshot,
  'table' | 'hosts' | 'vips' | 'defaultProduct' | 'products' | 'clusters' | 'memo'
>;

/**
 * A compiled routing table; read-only, shared by every request that started on it. It is the
 * BookView (`../lib/snapshot-book.ts`) the bfe, sqlite and etcd books hold.
 */
export class Snapshot {
  readonly table: RoutingTable;
  readonly hosts: HostTable;
  readonly vips: ReadonlyMap<string, HostEntry>;
  readonly defaultProduct: HostEntry | undefined;
  readonly products: ReadonlyMap<string, ProductRoutes>;
  readonly clusters: ReadonlyMap<string, CompiledCluster>;
  /** What the next build may take from this one (`reuse.ts`). */
  readonly memo: BuildMemo;

  constructor(parts: SnapshotParts) {
    this.table = parts.table;
    this.hosts = parts.hosts;
    this.vips = parts.vips;
    this.defaultProduct = parts.defaultProduct;
    this.products = parts.products;
    this.clusters = parts.clusters;
    this.memo = parts.memo;
  }

  /** The product of a request: host table, then VIP, then the default product. */
  productOf(req: Request): HostEntry | undefined {
    const byHost = this.hosts.lookup(req.host);
    if (byHost !== undefined) return byHost;
    const vip = req.vip;
    if (vip !== undefined && this.vips.size > 0) {
      const byVip = this.vips.get(vip) ?? this.#vipSlow(vip);
      if (byVip !== undefined) return byVip;
    }
    return this.defaultProduct;
  }

  /** Non-canonical VIP text (`2001:DB8::1`, `::ffff:1.2.3.4`): canonicalise, then look up. */
  #vipSlow(vip: string): HostEntry | undefined {
    const canonical = canonicalIp(vip);
    return canonical === undefined || canonical === vip ? undefined : this.vips.get(canonical);
  }

  /** The candidates for a request, or undefined when no product, rule or cluster applies. */
  findAddresses(req: Request): Candidates | undefined {
    const product = this.productOf(req);
    if (product === undefined) return undefined;
    const routes = this.products.get(product.product);
    if (routes === undefined) return undefined;
    if (routes.basic !== undefined) {
      const hit = routes.basic.lookup(req.host, req.path);
      if (hit?.candidates !== undefined) return hit.candidates;
    }
    return firstMatch(routes.rules, req)?.candidates;
  }

  /** Every backend of every cluster, with its cluster's policy (registry, health checks). */
  *backends(): Iterable<BackendEntry> {
    for (const cluster of this.clusters.values()) yield* entriesOf(cluster);
  }

  /**
   * The same entries, one group per cluster; a cluster compiled once (reused by the next
   * snapshot while unchanged, `reuse.ts`) gives the same group object every time.
   */
  backendGroups(): (readonly BackendEntry[])[] {
    return Array.from(this.clusters.values(), entriesOf);
  }

  /** Its hosts, products, clusters and backends by name (`routes updated`; made once, when asked). */
  inventory(): RoutesInventory {
    return tableInventory(this.table);
  }
}

/** The entries of each compiled cluster, made once. */
const groups = new WeakMap<CompiledCluster, readonly BackendEntry[]>();

function entriesOf(cluster: CompiledCluster): readonly BackendEntry[] {
  let entries = groups.get(cluster);
  if (entries === undefined) {
    const list: BackendEntry[] = [];
    for (const sub of cluster.subclusters)
      for (const backend of sub.backends) list.push({ backend, policy: cluster.policy, cluster: cluster.name });
    entries = list;
    groups.set(cluster, entries);
  }
  return entries;
}
