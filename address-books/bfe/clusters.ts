/**
 * Clusters → frozen candidate material, built once per snapshot: each cluster's policy and its
 * sub-clusters (sorted by name, as BFE's GSLB walks them), each with its backends. Every rule
 * that targets a cluster gets one frozen Candidates object sharing these parts.
 */
import { parseHostPort } from '../../src/config/address.ts';
import { toPolicy } from '../../src/config/cluster.ts';
import {
  type Backend,
  BLACKHOLE,
  type Candidates,
  type ClusterPolicy,
  type SubCluster,
} from '../../src/contracts/types.ts';
import type { Issues } from './issues.ts';
import type { ClusterConfig } from './routing-table.ts';

/** A compiled cluster: name, policy and frozen sub-clusters. */
export interface CompiledCluster {
  readonly name: string;
  readonly policy: ClusterPolicy;
  readonly subclusters: readonly SubCluster[];
}

function buildBackends(cfg: ClusterConfig['subclusters'][string], where: string, issues: Issues): readonly Backend[] {
  const seen = new Set<string>();
  const out: Backend[] = [];
  cfg.backends.forEach((b, i) => {
    const hp = parseHostPort(b.address);
    if (hp === undefined) return; // the schema already reported it
    if (seen.has(b.address)) issues.add(`${where}.backends[${i}]`, `duplicate backend ${b.address}`);
    seen.add(b.address);
    out.push(
      Object.freeze({ id: b.address, host: hp.host, port: hp.port, weight: b.weight, name: b.name ?? b.address }),
    );
  });
  return Object.freeze(out);
}

/** Compiles one cluster, recording every weight problem in `issues`. */
export function compileCluster(name: string, cfg: ClusterConfig, issues: Issues): CompiledCluster {
  const where = `clusters.${name}`;
  const subclusters: SubCluster[] = [];
  let total = 0;
  for (const subName of Object.keys(cfg.subclusters).sort()) {
    const sub = cfg.subclusters[subName]!;
    const subWhere = `${where}.subclusters.${subName}`;
    const backends = buildBackends(sub, subWhere, issues);
    if (subName === BLACKHOLE) {
      if (backends.length > 0) issues.add(subWhere, `${BLACKHOLE} takes no backends`);
    } else if ((sub.weight > 0 || backends.length > 0) && backends.reduce((s, b) => s + b.weight, 0) <= 0) {
      // A weight-0 sub-cluster with no backends is allowed: BFE lists such spares in gslb.data.
      issues.add(subWhere, 'total backend weight must be > 0');
    }
    total += sub.weight;
    subclusters.push(Object.freeze({ name: subName, weight: sub.weight, backends }));
  }
  if (subclusters.length === 0) issues.add(`${where}.subclusters`, 'a cluster needs at least one sub-cluster');
  else if (total <= 0) issues.add(`${where}.subclusters`, 'total sub-cluster weight must be > 0');
  return Object.freeze({ name, policy: toPolicy(cfg), subclusters: Object.freeze(subclusters) });
}

/** The frozen Candidates a rule hands to the operator. */
export function candidatesFor(cluster: CompiledCluster, product: string, rule: string): Candidates {
  return Object.freeze({
    product,
    cluster: cluster.name,
    policy: cluster.policy,
    subclusters: cluster.subclusters,
    rule,
  });
}
