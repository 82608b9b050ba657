/**
 * `switchboard db init|import|export --db FILE`: create a SQLite routes database, load it from a
 * routes file / config / BFE conf dir / classic list, and print it back as YAML. The operations
 * are the book's (`address-books/sqlite/store.ts`); this file parses the arguments and prints.
 */
import type { Command } from 'commander';
import { dbExport, dbImport, dbInit } from '../address-books/sqlite/store.ts';
import { exitCodeOf } from '../app/exit.ts';
import { isSwitchboardError, SwitchboardError } from '../src/base/errors.ts';

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
