/**
 * BFE's JSON data files → a RoutingTable (reference bfe.md §3), so an existing BFE deployment's
 * routing loads unchanged:
 *
 * 1. find each file in DIR, DIR/server_data_conf or DIR/cluster_conf (BFE's own layout);
 * 2. `host_rule.data` → products with `hostTags` and `defaultProduct`;
 *    `vip_rule.data` (optional) → products' `vips`;
 *    `route_rule.data` → products' `basicRules` (BasicRule) and `rules` (ProductRule);
 * 3. the cluster files → `clusters` (bfe-json-clusters.ts);
 * 4. BFE's own checks are applied (required fields, tags and products that must exist);
 *    unknown keys are ignored and listed in `warnings`.
 *
 * The result is input-form plain data; `compileRoutingTable` validates it like any YAML table.
 */
import { access } from 'node:fs/promises';
import { join as joinPath } from 'node:path';
import { SwitchboardError } from '../../src/base/errors.ts';
import { CONFIG_FILE, readUserText } from '../../src/base/safe-file.ts';
import { joinClusters, readClusterConf, readClusterTable, readGslb } from './bfe-json-clusters.ts';
import { BfeReader } from './bfe-json-reader.ts';

type Json = Record<string, unknown>;

/** The data files Switchboard reads, with BFE's default sub-folder of each. */
export const BFE_FILES = {
  hostRule: ['host_rule.data', 'server_data_conf'],
  vipRule: ['vip_rule.data', 'server_data_conf'],
  routeRule: ['route_rule.data', 'server_data_conf'],
  clusterConf: ['cluster_conf.data', 'server_data_conf'],
  gslb: ['gslb.data', 'cluster_conf'],
  clusterTable: ['cluster_table.data', 'cluster_conf'],
} as const;

/** The parsed JSON documents (vip_rule.data is optional). */
export type BfeDocuments = {
  readonly [K in keyof typeof BFE_FILES]: K extends 'vipRule' ? unknown | undefined : unknown;
};

/** A converted BFE configuration. */
export interface BfeImport {
  /** Input-form routing table (validate with `compileRoutingTable`). */
  readonly table: Json;
  /** Unknown keys and approximations, one line each. */
  readonly warnings: readonly string[];
}

function readHostRule(r: BfeReader, doc: unknown, products: Record<string, Json>): string | undefined {
  const top = r.fields(doc, '', ['Version', 'DefaultProduct', 'Hosts', 'HostTags']);
  if (top === undefined) return undefined;
  r.string(top.Version, 'Version', true);
  const hosts = r.map(top.Hosts, 'Hosts', true) ?? {};
  const tagsOf = r.map(top.HostTags, 'HostTags', true) ?? {};
  const owner = new Map<string, string>();
  for (const [product, rawTags] of Object.entries(tagsOf)) {
    const tags = r.strings(rawTags, `HostTags.${product}`, true) ?? [];
    const hostTags: Record<string, string[]> = {};
    for (const tag of tags) {
      owner.set(tag, product);
      hostTags[tag] = r.strings(hosts[tag], `Hosts.${tag}`, false) ?? [];
    }
    products[product] = tags.length > 0 ? { hostTags } : {};
  }
  for (const tag of Object.keys(hosts)) {
    if (!owner.has(tag)) r.error(`Hosts.${tag}`, `host tag ${tag} belongs to no product in HostTags`);
  }
  const def = r.string(top.DefaultProduct, 'DefaultProduct', false);
  if (def === undefined || def === '') return undefined;
  if (!(def in tagsOf)) r.error('DefaultProduct', `product ${def} is not in HostTags`);
  return def;
}

function readVipRule(r: BfeReader, doc: unknown, products: Record<string, Json>): void {
  const top = r.fields(doc, '', ['Version', 'Vips']);
  if (top === undefined) return;
  if (r.string(top.Version, 'Version', true) === '') r.error('Version', 'must not be empty');
  for (const [product, raw] of Object.entries(r.map(top.Vips, 'Vips', true) ?? {})) {
    const vips = r.strings(raw, `Vips.${product}`, true) ?? [];
    products[product] ??= {};
    products[product].vips = vips;
  }
}

function readBasicRules(r: BfeReader, product: string, raw: unknown): Json[] {
  const out: Json[] = [];
  (r.list(raw, `BasicRule.${product}`, true) ?? []).forEach((item, i) => {
    const where = `BasicRule.${product}[${i}]`;
    const f = r.fields(item, where, ['Hostname', 'Path', 'ClusterName']);
    if (f === undefined) return;
    const cluster = r.string(f.ClusterName, `${where}.ClusterName`, true);
    const hosts = r.strings(f.Hostname, `${where}.Hostname`, false);
    const paths = r.strings(f.Path, `${where}.Path`, false);
    if (hosts === undefined && paths === undefined) r.error(where, 'needs Hostname or Path');
    if (cluster === undefined) return;
    const rule: Json = {};
    if (hosts !== undefined) rule.hosts = hosts;
    if (paths !== undefined) rule.paths = paths;
    rule.cluster = cluster;
    out.push(rule);
  });
  return out;
}

function readProductRules(r: BfeReader, product: string, raw: unknown): Json[] {
  const out: Json[] = [];
  (r.list(raw, `ProductRule.${product}`, true) ?? []).forEach((item, i) => {
    const where = `ProductRule.${product}[${i}]`;
    const f = r.fields(item, where, ['Cond', 'ClusterName']);
    if (f === undefined) return;
    const cond = r.string(f.Cond, `${where}.Cond`, true);
    const cluster = r.string(f.ClusterName, `${where}.ClusterName`, true);
    if (cond !== undefined && cluster !== undefined) out.push({ cond, cluster });
  });
  return out;
}

function readRouteRule(r: BfeReader, doc: unknown, products: Record<string, Json>, known: ReadonlySet<string>): void {
  const top = r.fields(doc, '', ['Version', 'BasicRule', 'ProductRule']);
  if (top === undefined) return;
  r.string(top.Version, 'Version', true);
  const basic = r.map(top.BasicRule, 'BasicRule', false);
  const advanced = r.map(top.ProductRule, 'ProductRule', false);
  if (basic === undefined && advanced === undefined) r.error('', 'no product rule');
  const sections = [
    ['BasicRule', basic, 'basicRules', readBasicRules],
    ['ProductRule', advanced, 'rules', readProductRules],
  ] as const;
  for (const [name, map, key, read] of sections) {
    for (const [product, raw] of Object.entries(map ?? {})) {
      if (!known.has(product)) r.error(`${name}.${product}`, `product ${product} is not in host_rule.data`);
      products[product] ??= {};
      products[product][key] = read(r, product, raw);
    }
  }
}

/** Converts parsed BFE documents to an input-form routing table; throws SWB_ERR_CONFIG on errors. */
export function convertBfe(docs: BfeDocuments): BfeImport {
  const warnings: string[] = [];
  const readers = Object.fromEntries(
    Object.entries(BFE_FILES).map(([k, [file]]) => [k, new BfeReader(file, warnings)]),
  ) as Record<keyof typeof BFE_FILES, BfeReader>;
  const products: Record<string, Json> = {};
  const defaultProduct = readHostRule(readers.hostRule, docs.hostRule, products);
  const hostProducts = new Set(Object.keys(products));
  if (docs.vipRule !== undefined) readVipRule(readers.vipRule, docs.vipRule, products);
  readRouteRule(readers.routeRule, docs.routeRule, products, hostProducts);
  const policies = readClusterConf(readers.clusterConf, docs.clusterConf);
  const gslb = readGslb(readers.gslb, docs.gslb);
  const table = readClusterTable(readers.clusterTable, docs.clusterTable);
  const clusters = joinClusters(readers.gslb, policies, gslb, table);
  const errors = Object.values(readers).flatMap((r) => r.issues.list.map((m) => `${r.file}: ${m}`));
  if (errors.length > 0) throw new SwitchboardError('SWB_ERR_CONFIG', `bfe config: ${errors.join('; ')}`);
  const out: Json = {};
  if (defaultProduct !== undefined) out.defaultProduct = defaultProduct;
  out.products = products;
  out.clusters = clusters;
  return { table: out, warnings };
}

async function locate(dir: string, file: string, sub: string): Promise<string | undefined> {
  for (const p of [joinPath(dir, file), joinPath(dir, sub, file)]) {
    try {
      await access(p);
      return p;
    } catch {}
  }
  return undefined;
}

/** The file paths of a BFE conf dir (missing optional files at their first candidate place). */
export async function locateBfeFiles(dir: string): Promise<Record<keyof typeof BFE_FILES, string | undefined>> {
  const out: Partial<Record<keyof typeof BFE_FILES, string | undefined>> = {};
  for (const [key, [file, sub]] of Object.entries(BFE_FILES))
    out[key as keyof typeof BFE_FILES] = await locate(dir, file, sub);
  return out as Record<keyof typeof BFE_FILES, string | undefined>;
}

/** Reads and converts a BFE conf dir; also returns the files read and their text (change detection). */
export async function loadBfeDir(dir: string): Promise<BfeImport & { files: string[]; fingerprint: string }> {
  const where = await locateBfeFiles(dir);
  const docs: Record<string, unknown> = {};
  const texts: string[] = [];
  for (const [key, [file]] of Object.entries(BFE_FILES)) {
    const path = where[key as keyof typeof BFE_FILES];
    if (path === undefined) {
      if (key === 'vipRule') continue;
      throw new SwitchboardError('SWB_ERR_CONFIG', `bfe config: ${file}: not found in ${dir}`);
    }
    let text: string;
    try {
      text = await readUserText(path, CONFIG_FILE);
    } catch (e) {
      throw new SwitchboardError('SWB_ERR_CONFIG', `bfe config: ${file}: ${(e as Error).message}`);
    }
    texts.push(text);
    try {
      docs[key] = JSON.parse(text);
    } catch (e) {
      throw new SwitchboardError('SWB_ERR_CONFIG', `bfe config: ${file}: ${(e as Error).message}`);
    }
  }
  const converted = convertBfe(docs as BfeDocuments);
  const files = Object.values(where).filter((p): p is string => p !== undefined);
  return { ...converted, files, fingerprint: texts.join('\u0000') };
}
