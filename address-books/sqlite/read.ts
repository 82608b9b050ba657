/**
 * Rows → routing-table input. One read transaction gives a consistent view of every table
 * (WAL: the writer is never waited for). The result is the plain data `compileRoutingTable`
 * validates; shape problems a row can have on its own (a JSON column that does not parse, a
 * row that points at a parent that does not exist) are collected here with the row's key.
 */
import type { DatabaseSync } from 'node:sqlite';
import { Labels } from './relabel.ts';

type Row = Record<string, unknown>;
type Json = Record<string, unknown>;

/** What `readBfeRows` assembled: the table input, where each part came from, and row problems. */
export interface RowsRead {
  readonly input: Json;
  readonly labels: Labels;
  readonly problems: readonly string[];
}

/** `table(k=v, …)`: how errors name a row. */
export function rowLabel(table: string, key: Record<string, unknown>): string {
  const parts = Object.entries(key).map(([k, v]) => `${k}=${String(v)}`);
  return `${table}(${parts.join(', ')})`;
}

/** Runs `read` inside one read transaction so every SELECT sees the same commit. */
export function inReadTransaction<T>(db: DatabaseSync, read: () => T): T {
  db.exec('BEGIN');
  try {
    return read();
  } finally {
    db.exec('COMMIT');
  }
}

function all(db: DatabaseSync, sql: string): Row[] {
  return db.prepare(sql).all() as Row[];
}

function jsonColumn(value: unknown, label: string, column: string, problems: string[]): unknown {
  if (value === null || value === undefined || value === '') return undefined;
  try {
    return JSON.parse(String(value));
  } catch {
    problems.push(`${label}.${column}: expected JSON, got ${JSON.stringify(value)}`);
    return undefined;
  }
}

const POLICY_COLUMNS = [
  ['balance', 'balance'],
  ['retries', 'retries'],
  ['cross_retries', 'crossRetries'],
  ['slow_start', 'slowStart'],
  ['proxy_protocol', 'proxyProtocol'],
] as const;

function readClusters(db: DatabaseSync, labels: Labels, problems: string[]): Json {
  const clusters: Json = {};
  for (const r of all(db, 'SELECT * FROM clusters ORDER BY name')) {
    const name = String(r.name);
    const label = rowLabel('clusters', { name });
    labels.set(`clusters.${name}`, label);
    const c: Json = { subclusters: {} };
    for (const [col, key] of POLICY_COLUMNS) if (r[col] !== null) c[key] = r[col];
    if (r.hash_strategy !== null || r.hash_key !== null) {
      c.hash = { ...(r.hash_strategy === null ? {} : { strategy: r.hash_strategy }), key: r.hash_key ?? '' };
    }
    const health = jsonColumn(r.health_check, label, 'health_check', problems);
    if (health !== undefined) c.healthCheck = health;
    clusters[name] = c;
  }
  const subs = new Map<string, { weight: unknown; backends: Json[] }>();
  for (const r of all(db, 'SELECT * FROM subclusters ORDER BY cluster, name')) {
    const key = { cluster: String(r.cluster), name: String(r.name) };
    const c = clusters[key.cluster] as { subclusters: Json } | undefined;
    const label = rowLabel('subclusters', key);
    if (c === undefined) {
      problems.push(`${label}: cluster ${key.cluster} does not exist`);
      continue;
    }
    const sub = { weight: r.weight, backends: [] as Json[] };
    c.subclusters[key.name] = sub;
    subs.set(`${key.cluster}\0${key.name}`, sub);
    labels.set(`clusters.${key.cluster}.subclusters.${key.name}`, label);
  }
  for (const r of all(db, 'SELECT * FROM backends ORDER BY cluster, subcluster, rowid')) {
    const key = { cluster: String(r.cluster), subcluster: String(r.subcluster), address: String(r.address) };
    const label = rowLabel('backends', key);
    const sub = subs.get(`${key.cluster}\0${key.subcluster}`);
    if (sub === undefined) {
      problems.push(`${label}: sub-cluster ${key.cluster}/${key.subcluster} does not exist`);
      continue;
    }
    labels.set(`clusters.${key.cluster}.subclusters.${key.subcluster}.backends[${sub.backends.length}]`, label);
    sub.backends.push({ address: key.address, weight: r.weight, ...(r.name === null ? {} : { name: r.name }) });
  }
  return clusters;
}

function listOf<T>(o: Json, key: string): T[] {
  const v = (o[key] as T[] | undefined) ?? [];
  o[key] = v;
  return v;
}

function readProducts(db: DatabaseSync, labels: Labels, problems: string[]): Json {
  const products: Json = {};
  for (const r of all(db, 'SELECT name FROM products ORDER BY name')) {
    const name = String(r.name);
    products[name] = {};
    labels.set(`products.${name}`, rowLabel('products', { name }));
  }
  const productFor = (label: string, name: unknown): Json | undefined => {
    const p = products[String(name)] as Json | undefined;
    if (p === undefined) problems.push(`${label}: product ${String(name)} does not exist`);
    return p;
  };
  for (const r of all(db, 'SELECT * FROM hosts ORDER BY host')) {
    const label = rowLabel('hosts', { host: r.host });
    const p = productFor(label, r.product);
    if (p === undefined) continue;
    if (r.tag === null || r.tag === '') {
      labels.set(`products.${String(r.product)}.hosts[${listOf(p, 'hosts').push(r.host) - 1}]`, label);
      continue;
    }
    const tags = (p.hostTags ?? {}) as Record<string, unknown[]>;
    p.hostTags = tags;
    const list = tags[String(r.tag)] ?? [];
    tags[String(r.tag)] = list;
    labels.set(`products.${String(r.product)}.hostTags.${String(r.tag)}[${list.push(r.host) - 1}]`, label);
  }
  for (const r of all(db, 'SELECT * FROM vips ORDER BY vip')) {
    const label = rowLabel('vips', { vip: r.vip });
    const p = productFor(label, r.product);
    if (p !== undefined) labels.set(`products.${String(r.product)}.vips[${listOf(p, 'vips').push(r.vip) - 1}]`, label);
  }
  for (const r of all(db, 'SELECT * FROM basic_rules ORDER BY product, position')) {
    const label = rowLabel('basic_rules', { product: r.product, position: r.position });
    const p = productFor(label, r.product);
    if (p === undefined) continue;
    const hosts = jsonColumn(r.hosts, label, 'hosts', problems);
    const paths = jsonColumn(r.paths, label, 'paths', problems);
    const rule = {
      ...(hosts === undefined ? {} : { hosts }),
      ...(paths === undefined ? {} : { paths }),
      cluster: r.cluster,
    };
    labels.set(`products.${String(r.product)}.basicRules[${listOf(p, 'basicRules').push(rule) - 1}]`, label);
  }
  for (const r of all(db, 'SELECT * FROM advanced_rules ORDER BY product, position')) {
    const label = rowLabel('advanced_rules', { product: r.product, position: r.position });
    const p = productFor(label, r.product);
    if (p === undefined) continue;
    const index = listOf(p, 'rules').push({ cond: r.cond, cluster: r.cluster }) - 1;
    labels.set(`products.${String(r.product)}.rules[${index}]`, label);
  }
  return products;
}

/** Reads the BFE-model tables into routing-table input (call inside `inReadTransaction`). */
export function readBfeRows(db: DatabaseSync): RowsRead {
  const labels = new Labels();
  const problems: string[] = [];
  const input: Json = {};
  const meta = db.prepare("SELECT value FROM meta WHERE key = 'defaultProduct'").get() as Row | undefined;
  if (meta !== undefined) {
    input.defaultProduct = meta.value;
    labels.set('defaultProduct', rowLabel('meta', { key: 'defaultProduct' }));
  }
  const conditions = all(db, 'SELECT * FROM conditions ORDER BY name');
  if (conditions.length > 0) {
    const named: Json = {};
    for (const r of conditions) {
      named[String(r.name)] = r.cond;
      labels.set(`conditions.${String(r.name)}`, rowLabel('conditions', { name: r.name }));
    }
    input.conditions = named;
  }
  input.products = readProducts(db, labels, problems);
  input.clusters = readClusters(db, labels, problems);
  return { input, labels, problems };
}

/** Reads the classic `servers` table into the `file` book's list form (backends: JSON array or spaces). */
export function readServerRows(db: DatabaseSync): { input: unknown[]; labels: Labels; problems: string[] } {
  const labels = new Labels();
  const problems: string[] = [];
  const input: unknown[] = [];
  for (const r of all(db, 'SELECT * FROM servers ORDER BY rowid')) {
    const label = rowLabel('servers', { host: r.host, path: r.path });
    const text = String(r.backends).trim();
    const backends = text.startsWith('[') ? jsonColumn(text, label, 'backends', problems) : text.split(/[\s,]+/);
    const policy = jsonColumn(r.policy, label, 'policy', problems) ?? {};
    if (typeof policy !== 'object' || Array.isArray(policy)) problems.push(`${label}.policy: expected a JSON object`);
    labels.set(`[${input.length}]`, label);
    input.push({ ...(policy as Json), host: r.host, ...(r.path === '' ? {} : { path: r.path }), backends });
  }
  return { input, labels, problems };
}
