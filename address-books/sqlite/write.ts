/**
 * Routing table / classic list → rows (`switchboard db import`). Everything is replaced in one
 * write transaction, so a running book sees the old routes or the new ones, never a mix.
 */
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { DEFAULT_POLICY } from '../../src/config/cluster.ts';
import type { RoutingTable } from '../bfe/routing-table.ts';
import { TABLES } from './schema.ts';

// `meta` also holds the schema version (only its defaultProduct row is replaced) and `servers`
// is the classic model's: neither is emptied by a BFE-model import.
const BFE_TABLES = TABLES.filter((t) => t !== 'meta' && t !== 'servers');

function inWriteTransaction(db: DatabaseSync, write: () => void): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    write();
    db.exec('COMMIT');
  } catch (e) {
    db.exec('ROLLBACK');
    throw e;
  }
}

function insert(db: DatabaseSync, table: string, columns: readonly string[]) {
  const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
  const stmt = db.prepare(sql);
  return (...values: SQLInputValue[]) => stmt.run(...values);
}

/** A column value, or NULL when it equals the DESIGN default (keeps rows short and readable). */
function unlessDefault<T extends SQLInputValue>(value: T, fallback: unknown): T | null {
  return JSON.stringify(value) === JSON.stringify(fallback) ? null : value;
}

function writeClusters(db: DatabaseSync, table: RoutingTable): void {
  const cluster = insert(db, 'clusters', [
    'name',
    'balance',
    'hash_strategy',
    'hash_key',
    'retries',
    'cross_retries',
    'slow_start',
    'proxy_protocol',
    'health_check',
  ]);
  const sub = insert(db, 'subclusters', ['cluster', 'name', 'weight']);
  const backend = insert(db, 'backends', ['cluster', 'subcluster', 'address', 'weight', 'name']);
  const d = DEFAULT_POLICY;
  for (const [name, c] of Object.entries(table.clusters)) {
    const health =
      JSON.stringify(c.healthCheck) === JSON.stringify(d.healthCheck) ? null : JSON.stringify(c.healthCheck);
    cluster(
      name,
      unlessDefault(c.balance, d.balance),
      unlessDefault(c.hash.strategy, d.hash.strategy),
      c.hash.key === '' ? null : c.hash.key,
      unlessDefault(c.retries, d.retries),
      unlessDefault(c.crossRetries, d.crossRetries),
      unlessDefault(c.slowStart, d.slowStart),
      unlessDefault(c.proxyProtocol, d.proxyProtocol),
      health,
    );
    for (const [subName, s] of Object.entries(c.subclusters)) {
      sub(name, subName, s.weight);
      for (const b of s.backends) backend(name, subName, b.address, b.weight, b.name ?? null);
    }
  }
}

function writeProducts(db: DatabaseSync, table: RoutingTable): void {
  const product = insert(db, 'products', ['name']);
  const host = insert(db, 'hosts', ['host', 'product', 'tag']);
  const vip = insert(db, 'vips', ['vip', 'product']);
  const basic = insert(db, 'basic_rules', ['product', 'position', 'hosts', 'paths', 'cluster']);
  const advanced = insert(db, 'advanced_rules', ['product', 'position', 'cond', 'cluster']);
  for (const [name, p] of Object.entries(table.products)) {
    product(name);
    for (const h of p.hosts ?? []) host(h, name, null);
    for (const [tag, hosts] of Object.entries(p.hostTags ?? {})) for (const h of hosts) host(h, name, tag);
    for (const v of p.vips ?? []) vip(v, name);
    for (const [i, r] of (p.basicRules ?? []).entries()) {
      const hosts = r.hosts === undefined ? null : JSON.stringify(r.hosts);
      basic(name, i, hosts, r.paths === undefined ? null : JSON.stringify(r.paths), r.cluster);
    }
    for (const [i, r] of (p.rules ?? []).entries()) advanced(name, i, r.cond, r.cluster);
  }
}

/** Replaces every BFE-model row with `table` (already validated) in one transaction. */
export function writeRoutingTable(db: DatabaseSync, table: RoutingTable): void {
  inWriteTransaction(db, () => {
    for (const t of BFE_TABLES) db.exec(`DELETE FROM ${t}`);
    db.exec("DELETE FROM meta WHERE key = 'defaultProduct'");
    if (table.defaultProduct !== undefined) {
      db.prepare("INSERT INTO meta (key, value) VALUES ('defaultProduct', ?)").run(table.defaultProduct);
    }
    for (const [name, cond] of Object.entries(table.conditions ?? {})) {
      db.prepare('INSERT INTO conditions (name, cond) VALUES (?, ?)').run(name, cond);
    }
    writeProducts(db, table);
    writeClusters(db, table);
  });
}

/** One classic entry as plain data: host, optional path, backends, and any policy keys. */
export interface ServerRow {
  readonly host: string;
  readonly path?: string | undefined;
  readonly backends: readonly (string | { readonly address: string; readonly weight: number })[];
  readonly policy?: Record<string, unknown> | undefined;
}

/** Replaces every row of the classic `servers` table in one transaction. */
export function writeServers(db: DatabaseSync, rows: readonly ServerRow[]): void {
  inWriteTransaction(db, () => {
    db.exec('DELETE FROM servers');
    const row = insert(db, 'servers', ['host', 'path', 'backends', 'policy']);
    for (const r of rows) {
      const policy = r.policy === undefined || Object.keys(r.policy).length === 0 ? null : JSON.stringify(r.policy);
      row(r.host, r.path ?? '', JSON.stringify(r.backends), policy);
    }
  });
}
