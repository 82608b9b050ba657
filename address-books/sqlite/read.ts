/**
 * Rows → routing-table input. One read transaction gives a consistent view of every table
 * (WAL: the writer is never waited for). The result is the plain data `compileRoutingTable`
 * validates; shape problems a row can have on its own (a JSON column that does not parse, a
 * row that points at a parent that does not exist) are collected here with the row's key.
 *
 * The readers are steps (`../lib/sliced.ts`) that yield every ROW_BATCH rows, so the book can
 * read a 10,000-host database in slices (`readStepsInTransaction`); `readBfeRows` and
 * `readServerRows` run them to the end at once (`db export`, benchmarks). A reload's read of
 * only what the change log names is `read-changed.ts`.
 */
import type { DatabaseSync } from 'node:sqlite';
import { runToEnd, type Steps } from '../lib/sliced.ts';
import { Labels } from './relabel.ts';
import {
  BACKEND_KEYS,
  type ClusterBuild,
  clusterBuilds,
  NAMED_BACKEND_KEYS,
  type ProductBuild,
  productBuilds,
} from './reuse-rows.ts';

type Row = Record<string, unknown>;
export type Json = Record<string, unknown>;

/** What `readBfeRows` assembled: the table input, where each part came from, and row problems. */
export interface RowsRead {
  readonly input: Json;
  /** Empty when read without labels (`labelled: false`). */
  readonly labels: Labels;
  readonly labelled: boolean;
  readonly problems: readonly string[];
}

/** What `readServerRows` assembled: the classic list, where each entry came from, and row problems. */
export interface ServerRowsRead {
  readonly input: unknown[];
  readonly labels: Labels;
  readonly labelled: boolean;
  readonly problems: string[];
}

/** A row's label, made only when something needs it (a problem, or a labelled read). */
type LazyLabel = () => string;

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

/**
 * `read` as steps inside one read transaction, held across the slices (WAL: writers go on; the
 * caller runs one read at a time and to the end, so the transaction always ends).
 */
export function* readStepsInTransaction<T>(db: DatabaseSync, read: Steps<T>): Steps<T> {
  db.exec('BEGIN');
  try {
    return yield* read;
  } finally {
    db.exec('COMMIT');
  }
}

/**
 * `SELECT columns FROM table ORDER BY order`, or, with `names` (a JSON array: a read of some
 * products' or clusters' rows only, `readBfeChangedSteps`), only the rows whose `column` is one
 * of them, in `order` within each (`byName`: `column` first, so the index on it serves).
 */
function select(
  columns: string,
  table: string,
  order: string,
  names?: string,
  column = 'name',
  byName = order,
): string {
  if (names === undefined) return `SELECT ${columns} FROM ${table} ORDER BY ${order}`;
  return `SELECT ${columns} FROM ${table} WHERE ${column} IN (SELECT value FROM json_each(?)) ORDER BY ${byName}`;
}

/** Rows per step. */
const ROW_BATCH = 256;

/** Every row of `sql`, each handed to `use`, with a `yield` every ROW_BATCH rows. */
function* each(db: DatabaseSync, sql: string, use: (r: Row) => void, names?: string): Steps<void> {
  let n = 0;
  const stmt = db.prepare(sql);
  for (const r of names === undefined ? stmt.iterate() : stmt.iterate(names)) {
    use(r as Row);
    if (++n % ROW_BATCH === 0) yield;
  }
}

/**
 * `each` with every row as an array of the columns `sql` names, in order: node:sqlite builds an
 * array several times faster than an object per row, which counts on the 10,000-row tables.
 */
export function* eachArray(db: DatabaseSync, sql: string, use: (r: unknown[]) => void, names?: string): Steps<void> {
  const stmt = db.prepare(sql);
  stmt.setReturnArrays(true);
  let n = 0;
  for (const r of names === undefined ? stmt.iterate() : stmt.iterate(names)) {
    use(r as unknown as unknown[]);
    if (++n % ROW_BATCH === 0) yield;
  }
}

function jsonColumn(value: unknown, label: LazyLabel, column: string, problems: string[]): unknown {
  if (value === null || value === undefined || value === '') return undefined;
  try {
    return JSON.parse(String(value));
  } catch {
    problems.push(`${label()}.${column}: expected JSON, got ${JSON.stringify(value)}`);
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

/** The clusters (`names`: only these, a JSON array), built against `previous` (`reuse-rows.ts`). */
export function* readClusters(
  db: DatabaseSync,
  labels: Labels | undefined,
  problems: string[],
  previous: unknown,
  names?: string,
): Steps<Json> {
  const builds = new Map<string, ClusterBuild>();
  const buildFor = clusterBuilds(previous);
  yield* each(
    db,
    select('*', 'clusters', 'name', names),
    (r) => {
      const name = String(r.name);
      const label = () => rowLabel('clusters', { name });
      labels?.set(`clusters.${name}`, label());
      const c: Json = { subclusters: {} };
      for (const [col, key] of POLICY_COLUMNS) if (r[col] !== null) c[key] = r[col];
      if (r.hash_strategy !== null || r.hash_key !== null) {
        c.hash = { ...(r.hash_strategy === null ? {} : { strategy: r.hash_strategy }), key: r.hash_key ?? '' };
      }
      const health = jsonColumn(r.health_check, label, 'health_check', problems);
      if (health !== undefined) c.healthCheck = health;
      builds.set(name, buildFor(name, c));
    },
    names,
  );
  const subclusters = select('cluster, name, weight', 'subclusters', 'cluster, name', names, 'cluster');
  yield* eachArray(
    db,
    subclusters,
    (r) => {
      const key = { cluster: String(r[0]), name: String(r[1]) };
      const c = builds.get(key.cluster);
      if (c === undefined) {
        problems.push(`${rowLabel('subclusters', key)}: cluster ${key.cluster} does not exist`);
        return;
      }
      c.sub(key.name, r[2]);
      labels?.set(`clusters.${key.cluster}.subclusters.${key.name}`, rowLabel('subclusters', key));
    },
    names,
  );
  const order = 'cluster, subcluster, rowid';
  const backends = select('cluster, subcluster, address, weight, name', 'backends', order, names, 'cluster');
  yield* eachArray(
    db,
    backends,
    (r) => {
      const key = { cluster: String(r[0]), subcluster: String(r[1]), address: String(r[2]) };
      const sub = builds.get(key.cluster)?.subNamed(key.subcluster);
      if (sub === undefined) {
        problems.push(`${rowLabel('backends', key)}: sub-cluster ${key.cluster}/${key.subcluster} does not exist`);
        return;
      }
      const i =
        r[4] === null
          ? sub.backends.push({ address: key.address, weight: r[3] }, BACKEND_KEYS)
          : sub.backends.push({ address: key.address, weight: r[3], name: r[4] }, NAMED_BACKEND_KEYS);
      labels?.set(`clusters.${key.cluster}.subclusters.${key.subcluster}.backends[${i}]`, rowLabel('backends', key));
    },
    names,
  );
  const clusters: Json = {};
  for (const [name, build] of builds) clusters[name] = build.result();
  return clusters;
}

/** The products (`names`: only these, a JSON array), built against `previous` (`reuse-rows.ts`). */
export function* readProducts(
  db: DatabaseSync,
  labels: Labels | undefined,
  problems: string[],
  previous: unknown,
  names?: string,
): Steps<Json> {
  const builds = new Map<string, ProductBuild>();
  const buildFor = productBuilds(previous);
  yield* eachArray(
    db,
    select('name', 'products', 'name', names),
    (r) => {
      const name = String(r[0]);
      builds.set(name, buildFor(name));
      labels?.set(`products.${name}`, rowLabel('products', { name }));
    },
    names,
  );
  const productFor = (label: LazyLabel, name: unknown): ProductBuild | undefined => {
    const p = builds.get(String(name));
    if (p === undefined) problems.push(`${label()}: product ${String(name)} does not exist`);
    return p;
  };
  const hosts = select('host, product, tag', 'hosts', 'host', names, 'product', 'product, host');
  yield* eachArray(
    db,
    hosts,
    (r) => {
      const [host, product, tag] = r;
      const label = () => rowLabel('hosts', { host });
      const p = productFor(label, product);
      if (p === undefined) return;
      if (tag === null || tag === '') {
        const i = p.host(host);
        labels?.set(`products.${String(product)}.hosts[${i}]`, label());
        return;
      }
      const i = p.taggedHost(String(tag), host);
      labels?.set(`products.${String(product)}.hostTags.${String(tag)}[${i}]`, label());
    },
    names,
  );
  yield* each(
    db,
    select('*', 'vips', 'vip', names, 'product', 'product, vip'),
    (r) => {
      const label = () => rowLabel('vips', { vip: r.vip });
      const p = productFor(label, r.product);
      if (p === undefined) return;
      const i = p.vip(r.vip);
      labels?.set(`products.${String(r.product)}.vips[${i}]`, label());
    },
    names,
  );
  yield* each(
    db,
    select('*', 'basic_rules', 'product, position', names, 'product'),
    (r) => {
      const label = () => rowLabel('basic_rules', { product: r.product, position: r.position });
      const p = productFor(label, r.product);
      if (p === undefined) return;
      const hosts = jsonColumn(r.hosts, label, 'hosts', problems);
      const paths = jsonColumn(r.paths, label, 'paths', problems);
      const rule = {
        ...(hosts === undefined ? {} : { hosts }),
        ...(paths === undefined ? {} : { paths }),
        cluster: r.cluster,
      };
      const i = p.basicRule(rule);
      labels?.set(`products.${String(r.product)}.basicRules[${i}]`, label());
    },
    names,
  );
  const advanced = select('product, position, cond, cluster', 'advanced_rules', 'product, position', names, 'product');
  yield* eachArray(
    db,
    advanced,
    (r) => {
      const [product, position, cond, cluster] = r;
      const label = () => rowLabel('advanced_rules', { product, position });
      const p = productFor(label, product);
      if (p === undefined) return;
      const index = p.rule({ cond, cluster });
      labels?.set(`products.${String(product)}.rules[${index}]`, label());
    },
    names,
  );
  const products: Json = {};
  for (const [name, build] of builds) products[name] = build.result();
  return products;
}

/** Reads the BFE-model tables into routing-table input (call inside `inReadTransaction`). */
export function readBfeRows(db: DatabaseSync): RowsRead {
  return runToEnd(readBfeSteps(db));
}

/**
 * `readBfeRows` as steps (inside `readStepsInTransaction`). `labelled: false` skips the map of
 * config path → row (two strings per row): a reload reads without it and, only when the table
 * does not compile, reads again with it in the same transaction to name the rows. `previous`:
 * an earlier read's `input`, whose objects are kept for products whose rows are all unchanged
 * (`reuse-rows.ts`; the input is equal either way).
 */
export function* readBfeSteps(db: DatabaseSync, labelled = true, previous?: unknown): Steps<RowsRead> {
  const all = new Labels();
  const labels = labelled ? all : undefined;
  const problems: string[] = [];
  const input: Json = {};
  yield* readHead(db, input, labels);
  input.products = yield* readProducts(db, labels, problems, previous);
  input.clusters = yield* readClusters(db, labels, problems, previous);
  return { input, labels: all, labelled, problems };
}

/** `defaultProduct` (meta) and `conditions` into `input`, in that key order; `conditions`: false keeps `base`'s. */
export function* readHead(db: DatabaseSync, input: Json, labels: Labels | undefined, base?: Json): Steps<void> {
  const meta = db.prepare("SELECT value FROM meta WHERE key = 'defaultProduct'").get() as Row | undefined;
  if (meta !== undefined) {
    input.defaultProduct = meta.value;
    labels?.set('defaultProduct', rowLabel('meta', { key: 'defaultProduct' }));
  }
  if (base !== undefined) {
    if (base.conditions !== undefined) input.conditions = base.conditions;
    return;
  }
  const named: Json = {};
  let conditions = 0;
  yield* each(db, 'SELECT * FROM conditions ORDER BY name', (r) => {
    named[String(r.name)] = r.cond;
    labels?.set(`conditions.${String(r.name)}`, rowLabel('conditions', { name: r.name }));
    conditions++;
  });
  if (conditions > 0) input.conditions = named;
}

/** Reads the classic `servers` table into the `file` book's list form (backends: JSON array or spaces). */
export function readServerRows(db: DatabaseSync): ServerRowsRead {
  return runToEnd(readServerSteps(db));
}

/** `readServerRows` as steps (inside `readStepsInTransaction`); `labelled` as in `readBfeSteps`. */
export function* readServerSteps(db: DatabaseSync, labelled = true): Steps<ServerRowsRead> {
  const all = new Labels();
  const labels = labelled ? all : undefined;
  const problems: string[] = [];
  const input: unknown[] = [];
  yield* each(db, 'SELECT * FROM servers ORDER BY rowid', (r) => {
    const label = () => rowLabel('servers', { host: r.host, path: r.path });
    const text = String(r.backends).trim();
    const backends = text.startsWith('[') ? jsonColumn(text, label, 'backends', problems) : text.split(/[\s,]+/);
    const policy = jsonColumn(r.policy, label, 'policy', problems) ?? {};
    if (typeof policy !== 'object' || Array.isArray(policy)) problems.push(`${label()}.policy: expected a JSON object`);
    labels?.set(`[${input.length}]`, label());
    input.push({ ...(policy as Json), host: r.host, ...(r.path === '' ? {} : { path: r.path }), backends });
  });
  return { input, labels: all, labelled, problems };
}
