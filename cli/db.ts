/**
 * `switchboard db init|import|export --db FILE`: create a SQLite routes database, load it from a
 * routes file / config / BFE conf dir / classic list, and print it back as YAML.
 */
import { DatabaseSync } from 'node:sqlite';
import type { Command } from 'commander';
import type { RoutingTable } from '../address-books/bfe/routing-table.ts';
import { routingTableToYaml } from '../address-books/bfe/yaml.ts';
import type { FileEntry } from '../address-books/file/parse.ts';
import { loadSqliteView } from '../address-books/sqlite/book.ts';
import { entriesToRows, loadImportSource, rowsToYaml } from '../address-books/sqlite/import-source.ts';
import { initDatabase } from '../address-books/sqlite/schema.ts';
import { writeRoutingTable, writeServers } from '../address-books/sqlite/write.ts';
import { isSwitchboardError, SwitchboardError } from '../src/errors.ts';
import { exitCodeOf } from './exit.ts';

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

async function report(what: string, run: () => Promise<void> | void): Promise<void> {
  try {
    await run();
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    process.stderr.write(`db ${what}: ${e.message}\n`);
    process.exitCode = exitCodeOf(e);
  }
}

function model(v: string): 'bfe' | 'classic' {
  if (v !== 'bfe' && v !== 'classic') throw new SwitchboardError('SWB_ERR_CONFIG', `--model: expected bfe or classic`);
  return v;
}

/** Adds the `db` command group to the program. */
export function addDbCommands(program: Command): void {
  const db = program.command('db').description('manage a SQLite routes database (the sqlite address book)');
  db.command('init')
    .description('create the tables, or migrate an existing file to the current schema (idempotent)')
    .requiredOption('--db <file>', 'database file')
    .action((o: { db: string }) => report('init', () => dbInit(o.db)));
  db.command('import')
    .description('validate a routes file, config, BFE conf dir or classic list, then replace the rows')
    .requiredOption('--db <file>', 'database file')
    .argument('<source>', 'routes.yaml, switchboard.yaml, a BFE conf dir, or servers.{yaml,json,csv}')
    .action((source: string, o: { db: string }) =>
      report('import', async () => {
        const r = await dbImport(o.db, source);
        for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
        process.stderr.write(`imported ${source} into ${o.db} (model ${r.model})\n`);
      }),
    );
  db.command('export')
    .description('print the routes as YAML')
    .requiredOption('--db <file>', 'database file')
    .option('--model <model>', 'bfe | classic', 'bfe')
    .action((o: { db: string; model: string }) =>
      report('export', () => {
        process.stdout.write(dbExport(o.db, model(o.model)));
      }),
    );
}
