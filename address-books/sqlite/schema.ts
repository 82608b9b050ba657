/**
 * The SQLite schema of the `sqlite` address book (README.md documents every table). Two models
 * share one file: the BFE model (products → rules → clusters → sub-clusters → backends) and the
 * classic host → backends list (`servers`). Each table's primary key is what errors name.
 */
import type { DatabaseSync } from 'node:sqlite';

/** The schema version written to `meta` by `initDatabase`. */
export const SCHEMA_VERSION = 1;

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
`;

/** Creates the tables and records the schema version; WAL lets the book read while others write. */
export function initDatabase(db: DatabaseSync): void {
  // WAL is persistent in the file: readers (the book) never wait for a writer, nor block one.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(SCHEMA_SQL);
  db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run('schema', String(SCHEMA_VERSION));
}
