/**
 * The `sqlite` address book (README.md): routes kept in a SQLite file, read with Node's
 * built-in `node:sqlite` (synchronous, no native add-on), never on the hot path.
 *
 * 1. `start()` opens the file read-only, reads every table in one read transaction, compiles
 *    the snapshot and fails the start if any row is bad.
 * 2. An unref'd timer polls `PRAGMA data_version` every `pollInterval`; the number changes only
 *    when another connection commits, so an idle database costs one tiny query per tick.
 * 3. On a change: read → compile → swap one reference → `snapshotChanged`. A bad row is logged
 *    with its table and key (`backends(cluster=web, subcluster=dc1, address=x).weight: …`) and
 *    the previous snapshot keeps serving.
 * 4. `close()` stops the timer and closes the file; lookups keep answering from the last snapshot.
 *
 * The snapshot, its swap and every lookup live in `../lib/snapshot-book.ts`.
 */
import { resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';
import { duration } from '../../src/config/duration.ts';
import { isSwitchboardError, SwitchboardError } from '../../src/errors.ts';
import type { AddressBookFactory, PluginContext } from '../../src/plugin.ts';
import { type BookView, SnapshotBook } from '../lib/snapshot-book.ts';
import { inReadTransaction, readBfeRows, readServerRows } from './read.ts';
import { compileBfeRead, compileClassicRead } from './view.ts';

const optionsSchema = z.strictObject({
  /** The database file, relative to the config file. */
  path: z.string().min(1),
  /** `bfe`: products, rules, clusters tables; `classic`: the `servers` host → backends list. */
  model: z.enum(['bfe', 'classic']).default('bfe'),
  pollInterval: duration.default(1000),
});

/** The options beside `name: sqlite`. */
export type SqliteBookOptions = z.output<typeof optionsSchema>;

/** Reads and compiles the whole database once (used by the book and by `db export`). */
export function loadSqliteView(db: DatabaseSync, model: 'bfe' | 'classic', source: string): BookView {
  const read = inReadTransaction(db, () => (model === 'bfe' ? readBfeRows(db) : readServerRows(db)));
  return model === 'bfe' ? compileBfeRead(read, source) : compileClassicRead(read, source);
}

/** The `sqlite` AddressBook instance (see the file header for its lifecycle). */
export class SqliteAddressBook extends SnapshotBook {
  readonly #options: SqliteBookOptions;
  readonly #file: string;
  readonly #source: string;
  #db: DatabaseSync | undefined;
  #dataVersion = -1;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: SqliteBookOptions, context: PluginContext) {
    super('address-books.sqlite', context);
    this.#options = options;
    this.#file = resolve(context.configDir, options.path);
    this.#source = `address-books.sqlite: ${options.path}`;
  }

  /** Opens the database and loads the first snapshot; a bad row fails the start. */
  async start(): Promise<void> {
    let db: DatabaseSync;
    try {
      // timeout 0: a locked database makes this poll skip, it never blocks the event loop.
      db = new DatabaseSync(this.#file, { readOnly: true, timeout: 0 });
    } catch (e) {
      throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `${this.#source}: open: ${(e as Error).message}`);
    }
    this.#db = db;
    try {
      this.#dataVersion = readDataVersion(db);
      this.swap(loadSqliteView(db, this.#options.model, this.#source));
    } catch (e) {
      db.close();
      this.#db = undefined;
      throw e;
    }
    this.#timer = setInterval(() => this.poll(), this.#options.pollInterval);
    this.#timer.unref();
  }

  /** Stops polling and closes the file; the last snapshot keeps answering. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#db?.close();
    this.#db = undefined;
  }

  /** Checks `data_version` and rebuilds when another connection committed; returns true on a swap. */
  poll(): boolean {
    const db = this.#db;
    if (db === undefined) return false;
    try {
      const v = readDataVersion(db);
      if (v === this.#dataVersion) return false;
      let view: BookView;
      try {
        view = loadSqliteView(db, this.#options.model, this.#source);
      } finally {
        // Bad rows are not re-read until the next commit; a busy database (not a
        // SwitchboardError) is retried on the next tick.
        this.#dataVersion = v;
      }
      this.swap(view);
      return true;
    } catch (e) {
      if (!isSwitchboardError(e)) this.#dataVersion = -1;
      // A database that stays busy fails every tick with the same message: log it once.
      if ((e as Error).message !== this.lastError) this.keepPrevious(e, 'reload failed');
      return false;
    }
  }
}

function readDataVersion(db: DatabaseSync): number {
  return Number((db.prepare('PRAGMA data_version').get() as { data_version: number }).data_version);
}

/** The `sqlite` address book factory: `addressBook: { name: sqlite, path: routes.db }`. */
export const sqliteAddressBook = {
  name: 'sqlite',
  options: optionsSchema,
  create(options: SqliteBookOptions, context: PluginContext): SqliteAddressBook {
    return new SqliteAddressBook(options, context);
  },
} satisfies AddressBookFactory;
