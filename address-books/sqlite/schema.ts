/**
 * The SQLite schema of the `sqlite` address book (README.md documents every table). Two models
 * share one file: the BFE model (products → rules → clusters → sub-clusters → backends) and the
 * classic host → backends list (`servers`). Each table's primary key is what errors name.
 */
import type { DatabaseSync } from 'node:sqlite';

/**
 * The schema version written to `meta` by `initDatabase`. 2: the change log (`change_log`, its
 * triggers, the `hosts(product)` and `vips(product)` indexes), which lets a reload read only
 * what changed (`changes.ts`); `initDatabase` on a version-1 file adds them.
 */
export const SCHEMA_VERSION = 2;

/** Every table the book reads, in the order `db export` and errors list them. */
export const TABLES = [
  'meta',
  'conditions',
  'products',
  'hosts',
  'vips',
  'basic_rules',
  'advanced_rules',
  'clusters',
  'subclusters',
  'backends',
  'servers',
] as const;

/**
 * How many entries the change log keeps (at least; up to 1,000 more between trims): a reload
 * that finds older entries gone reads every table (`changes.ts`). Each row a write touches adds
 * one or two entries.
 */
export const CHANGE_LOG_KEEP = 10_000;

/**
 * The BFE-model tables whose writes are logged: table, the entry's `kind`, the column naming the
 * product or cluster the row belongs to (NULL: the whole table), and the primary key when that
 * column is not part of it (`hosts`, `vips`: an `INSERT OR REPLACE` or `UPDATE OR REPLACE`
 * deletes the conflicting row without firing a delete trigger unless the writer set
 * `recursive_triggers`, so a BEFORE trigger logs the product of the row it will replace).
 * `meta` is not logged: the read takes its one row every time.
 */
const LOGGED = [
  ['conditions', 'conditions', undefined, undefined],
  ['products', 'product', 'name', undefined],
  ['hosts', 'product', 'product', 'host'],
  ['vips', 'product', 'product', 'vip'],
  ['basic_rules', 'product', 'product', undefined],
  ['advanced_rules', 'product', 'product', undefined],
  ['clusters', 'cluster', 'name', undefined],
  ['subclusters', 'cluster', 'cluster', undefined],
  ['backends', 'cluster', 'cluster', undefined],
] as const;

function logTriggers(): { names: string[]; sql: string } {
  const names: string[] = ['change_log_trim'];
  const sql: string[] = [
    // Every 1,000th entry, so a bulk write does not pay a DELETE per row.
    `CREATE TRIGGER IF NOT EXISTS change_log_trim AFTER INSERT ON change_log WHEN NEW.rev % 1000 = 0 BEGIN
  DELETE FROM change_log WHERE rev <= NEW.rev - ${CHANGE_LOG_KEEP}; END;`,
  ];
  const log = (kind: string, value: string, where = '') =>
    where === ''
      ? `INSERT INTO change_log (kind, name) VALUES ('${kind}', ${value});`
      : `INSERT INTO change_log (kind, name) SELECT '${kind}', ${value} ${where};`;
  for (const [table, kind, column, key] of LOGGED) {
    const trigger = (name: string, when: string, body: string) => {
      names.push(`change_log_${table}_${name}`);
      sql.push(`CREATE TRIGGER IF NOT EXISTS change_log_${table}_${name} ${when} ON ${table} BEGIN\n  ${body} END;`);
    };
    const of = (row: 'NEW' | 'OLD') => (column === undefined ? 'NULL' : `${row}.${column}`);
    trigger('insert', 'AFTER INSERT', log(kind, of('NEW')));
    trigger('delete', 'AFTER DELETE', log(kind, of('OLD')));
    trigger(
      'update',
      'AFTER UPDATE',
      column === undefined
        ? log(kind, 'NULL')
        : `${log(kind, of('OLD'))} ${log(kind, of('NEW'), `WHERE NEW.${column} IS NOT OLD.${column}`)}`,
    );
    if (key !== undefined) {
      trigger('replace', 'BEFORE INSERT', log(kind, column!, `FROM ${table} WHERE ${key} = NEW.${key}`));
      trigger(
        'rekey',
        `BEFORE UPDATE OF ${key}`,
        log(kind, column!, `FROM ${table} WHERE ${key} = NEW.${key} AND NEW.${key} IS NOT OLD.${key}`),
      );
    }
  }
  return { names, sql: sql.join('\n') };
}

const triggers = logTriggers();

/** The change log's triggers: a reload reads only what changed while all of them exist (`changes.ts`). */
export const CHANGE_LOG_TRIGGERS: readonly string[] = triggers.names;

/**
 * The change log: one entry per row written in a BFE-model table, naming the product or cluster
 * the row belongs to (before and after an update), written by triggers in the writer's own
 * transaction, whatever the writer (`switchboard db`, sqlite3, an application). `rev` only grows
 * (AUTOINCREMENT: never reused, even after the trim deletes old entries).
 */
const CHANGE_LOG_SQL = `CREATE TABLE IF NOT EXISTS change_log (
  rev INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, name TEXT);
${triggers.sql}
`;

/** The DDL; `IF NOT EXISTS` everywhere so `db init` on an existing file is harmless. */
export const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS conditions (name TEXT PRIMARY KEY, cond TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS products (name TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY, product TEXT NOT NULL, tag TEXT);
CREATE TABLE IF NOT EXISTS vips (vip TEXT PRIMARY KEY, product TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS basic_rules (
  product TEXT NOT NULL, position INTEGER NOT NULL,
  hosts TEXT, paths TEXT, cluster TEXT NOT NULL,
  PRIMARY KEY (product, position));
CREATE TABLE IF NOT EXISTS advanced_rules (
  product TEXT NOT NULL, position INTEGER NOT NULL, cond TEXT NOT NULL, cluster TEXT NOT NULL,
  PRIMARY KEY (product, position));
CREATE TABLE IF NOT EXISTS clusters (
  name TEXT PRIMARY KEY, balance TEXT, hash_strategy TEXT, hash_key TEXT, retries INTEGER,
  cross_retries INTEGER, slow_start INTEGER, proxy_protocol TEXT, health_check TEXT);
CREATE TABLE IF NOT EXISTS subclusters (
  cluster TEXT NOT NULL, name TEXT NOT NULL, weight INTEGER NOT NULL,
  PRIMARY KEY (cluster, name));
CREATE TABLE IF NOT EXISTS backends (
  cluster TEXT NOT NULL, subcluster TEXT NOT NULL, address TEXT NOT NULL,
  weight INTEGER NOT NULL DEFAULT 1, name TEXT,
  PRIMARY KEY (cluster, subcluster, address));
CREATE TABLE IF NOT EXISTS servers (
  host TEXT NOT NULL, path TEXT NOT NULL DEFAULT '', backends TEXT NOT NULL, policy TEXT,
  PRIMARY KEY (host, path));
CREATE INDEX IF NOT EXISTS hosts_by_product ON hosts (product, host);
CREATE INDEX IF NOT EXISTS vips_by_product ON vips (product, vip);
${CHANGE_LOG_SQL}`;

/**
 * Creates the tables and records the schema version; WAL lets the book read while others write.
 * On an existing file it is the migration: what a version-1 file lacks (the change log, its
 * triggers and indexes) is added, nothing else is touched.
 */
export function initDatabase(db: DatabaseSync): void {
  // WAL is persistent in the file: readers (the book) never wait for a writer, nor block one.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(SCHEMA_SQL);
  db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run('schema', String(SCHEMA_VERSION));
}
