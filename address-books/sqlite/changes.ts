/**
 * What changed since a read (README.md, "Reading only what changed"). Schema version 2 keeps a
 * change log (`schema.ts`): triggers add one entry per row written in a BFE-model table, naming
 * the product or cluster the row belongs to, in the writer's own transaction, so any writer
 * (`switchboard db`, sqlite3, an application) is logged. A reload that knows the log revision
 * of its previous read reads only the products and clusters named since (`readBfeChangedSteps`,
 * `read-changed.ts`); it reads every table instead when the log cannot say what changed:
 *
 * - no previous read (start), or the previous read had row problems (its rows are not all
 *   accounted for by names: a row of a product that did not exist);
 * - the schema changed since the previous read (`PRAGMA schema_version`: a migration, a trigger
 *   or table dropped or created — writes made while a trigger was missing were not logged);
 * - the file has no change log or lacks one of its triggers (schema version 1: `db init` adds
 *   them);
 * - entries since the previous read were trimmed (the log keeps `CHANGE_LOG_KEEP`), the log was
 *   emptied or re-created (its revision went back), or there are more than `MAX_ENTRIES` of them
 *   (a bulk write: reading every table is cheaper than many small reads).
 *
 * Everything here runs inside the read's transaction, so the log and the rows are one commit.
 */
import type { DatabaseSync } from 'node:sqlite';
import { CHANGE_LOG_TRIGGERS } from './schema.ts';

/** Log entries since the previous read beyond which a reload reads every table. */
export const MAX_ENTRIES = 2000;
/** Products plus clusters named since the previous read beyond which a reload reads every table. */
export const MAX_NAMES = 500;

/** Where a read stands in the change log: what a later read compares against. */
export interface LogPosition {
  /** `PRAGMA schema_version` when read. */
  readonly schema: number;
  /** The last log revision the read includes. */
  readonly rev: number;
}

/** The names written since a position; `conditions`: the conditions table was written. */
export interface Changed {
  readonly products: readonly string[];
  readonly clusters: readonly string[];
  readonly conditions: boolean;
}

/** Per connection: whether the log is complete at a schema version (checked again when it changes). */
const complete = new WeakMap<DatabaseSync, { schema: number; complete: boolean }>();

/** The log position now, or undefined when the file has no complete change log. */
export function logPosition(db: DatabaseSync): LogPosition | undefined {
  const schema = Number((db.prepare('PRAGMA schema_version').get() as { schema_version: number }).schema_version);
  let known = complete.get(db);
  if (known?.schema !== schema) {
    known = { schema, complete: hasLog(db) };
    complete.set(db, known);
  }
  if (!known.complete) return undefined;
  const seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'change_log'").get() as
    | { seq: number }
    | undefined;
  return { schema, rev: Number(seq?.seq ?? 0) };
}

function hasLog(db: DatabaseSync): boolean {
  const names = new Set<string>();
  for (const r of db.prepare("SELECT type, name FROM sqlite_schema WHERE name LIKE 'change_log%'").iterate()) {
    names.add(`${String(r.type)} ${String(r.name)}`);
  }
  return names.has('table change_log') && CHANGE_LOG_TRIGGERS.every((t) => names.has(`trigger ${t}`));
}

/**
 * The products, clusters and tables written between `since` and `now`, or undefined when the
 * log cannot say (see the file header).
 */
export function changedSince(db: DatabaseSync, since: LogPosition, now: LogPosition): Changed | undefined {
  if (since.schema !== now.schema || now.rev < since.rev) return undefined;
  const expected = now.rev - since.rev;
  if (expected > MAX_ENTRIES) return undefined;
  const count = db.prepare('SELECT count(*) AS n FROM change_log WHERE rev > ?').get(since.rev) as { n: number };
  // Fewer entries than revisions: some were trimmed (or deleted by hand).
  if (Number(count.n) !== expected) return undefined;
  const products: string[] = [];
  const clusters: string[] = [];
  let conditions = false;
  const stmt = db.prepare('SELECT DISTINCT kind, name FROM change_log WHERE rev > ?');
  stmt.setReturnArrays(true);
  for (const r of stmt.iterate(since.rev) as Iterable<unknown[]>) {
    const [kind, name] = r;
    if (kind === 'conditions') conditions = true;
    // A name that is not text (a NULL or blob key) is not one the per-name reads can select.
    else if (typeof name !== 'string') return undefined;
    else if (kind === 'product') products.push(name);
    else if (kind === 'cluster') clusters.push(name);
    else return undefined;
  }
  if (products.length + clusters.length > MAX_NAMES) return undefined;
  return { products, clusters, conditions };
}
