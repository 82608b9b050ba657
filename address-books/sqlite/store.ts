/**
 * The operations on a routes database named by its file, behind `switchboard db init|import|export`:
 * create or migrate the schema, replace the rows from a routes file / config / BFE conf dir /
 * classic list (validated whole first), and read them back as YAML.
 */
import { DatabaseSync } from 'node:sqlite';
import { SwitchboardError } from '../../src/base/errors.ts';
import type { RoutingTable } from '../bfe/routing-table.ts';
import { routingTableToYaml } from '../bfe/yaml.ts';
import type { FileEntry } from '../file/parse.ts';
import { loadSqliteView } from './book.ts';
import { entriesToRows, loadImportSource, rowsToYaml } from './import-source.ts';
import { initDatabase } from './schema.ts';
import { writeRoutingTable, writeServers } from './write.ts';

function open(file: string, readOnly = false): DatabaseSync {
  try {
    return new DatabaseSync(file, { readOnly, timeout: 5000 });
  } catch (e) {
    throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `open ${file}: ${(e as Error).message}`);
  }
}

/** Creates the schema in `file` (idempotent). */
export function dbInit(file: string): void {
  const db = open(file);
  try {
    initDatabase(db);
  } finally {
    db.close();
  }
}

/** Validates `source` then replaces the matching model's rows of `file` in one transaction. */
export async function dbImport(file: string, source: string): Promise<{ model: string; warnings: readonly string[] }> {
  const loaded = await loadImportSource(source);
  const db = open(file);
  try {
    initDatabase(db);
    if (loaded.model === 'bfe') writeRoutingTable(db, loaded.table);
    else writeServers(db, loaded.rows);
  } finally {
    db.close();
  }
  return { model: loaded.model, warnings: loaded.warnings };
}

/** The database's routes as YAML (a routes file for `bfe`, the `file` book's list for `classic`). */
export function dbExport(file: string, model: 'bfe' | 'classic'): string {
  const db = open(file, true);
  try {
    const view = loadSqliteView(db, model, `db ${file}`);
    return model === 'bfe'
      ? routingTableToYaml(view.table as RoutingTable, [`exported from ${file}`])
      : rowsToYaml(entriesToRows(view.table as FileEntry[]));
  } finally {
    db.close();
  }
}
