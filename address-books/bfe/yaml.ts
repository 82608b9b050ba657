/**
 * RoutingTable → YAML text (`switchboard import-bfe DIR`): the routes-file form (usable as
 * `routes: routes.yaml`), with every value equal to its DESIGN default left out so the output
 * reads like hand-written config. Parsing the output gives back the same table.
 */
import { stringify } from 'yaml';
import { DEFAULT_POLICY } from '../../src/config/cluster.ts';
import type { ClusterConfig, RoutingTable } from './routing-table.ts';

type Json = Record<string, unknown>;

function withoutDefaults(value: Json, defaults: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (JSON.stringify(v) !== JSON.stringify(defaults[k])) out[k] = v;
  }
  return out;
}

function compactCluster(c: ClusterConfig): Json {
  const defaults = DEFAULT_POLICY as unknown as Json;
  const out: Json = {};
  for (const key of ['balance', 'hash', 'retries', 'crossRetries', 'slowStart', 'proxyProtocol'] as const) {
    if (JSON.stringify(c[key]) !== JSON.stringify(defaults[key]))
      out[key] = key === 'hash' ? withoutDefaults(c.hash, { key: '' }) : c[key];
  }
  const health = withoutDefaults(c.healthCheck as unknown as Json, defaults.healthCheck as Json);
  if (Object.keys(health).length > 0) out.healthCheck = health;
  const subclusters: Json = {};
  for (const [name, sub] of Object.entries(c.subclusters)) {
    const backends = sub.backends.map((b) => {
      const o: Json = { address: b.address };
      if (b.weight !== 1) o.weight = b.weight;
      if (b.name !== undefined && b.name !== b.address) o.name = b.name;
      return o;
    });
    subclusters[name] = backends.length === 0 ? { weight: sub.weight } : { weight: sub.weight, backends };
  }
  out.subclusters = subclusters;
  return out;
}

/** YAML text of a parsed routing table, with optional `# ` comment lines on top. */
export function routingTableToYaml(table: RoutingTable, comments: readonly string[] = []): string {
  const doc: Json = {};
  if (table.defaultProduct !== undefined) doc.defaultProduct = table.defaultProduct;
  if (table.conditions !== undefined) doc.conditions = table.conditions;
  doc.products = table.products;
  const clusters: Json = {};
  for (const [name, c] of Object.entries(table.clusters)) clusters[name] = compactCluster(c);
  doc.clusters = clusters;
  const head = comments.map((c) => `# ${c.replace(/\n/g, ' ')}\n`).join('');
  return head + stringify(doc, { lineWidth: 0 });
}
