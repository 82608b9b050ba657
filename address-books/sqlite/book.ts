/**
 * The `sqlite` address book (README.md): routes kept in a SQLite file, read with Node's
 * built-in `node:sqlite` (synchronous, no native add-on), never on the hot path.
 *
 * 1. `start()` opens the file read-only, reads every table in one read transaction, compiles
 *    the snapshot and fails the start if any row is bad. A file that cannot be opened or read
 *    (missing, locked) fails the start too, unless a last-good cache (`cache:`) exists: then
 *    the cached routes serve, logged as stale with their age, until a poll reads the file.
 * 2. An unref'd timer polls `PRAGMA data_version` every `pollInterval`; the number changes only
 *    when another connection commits, so an idle database costs one tiny query per tick.
 * 3. On a change: read (one read transaction; the BFE model reads only the products and
 *    clusters the change log names since the last read, `changes.ts`) → compile (both in time slices,
 *    `../lib/sliced.ts`; the classic model compiles at once; one poll at a time) → swap one reference → `snapshotChanged` → save the rows read to the last-good
 *    cache. A bad row is logged with its table and key
 *    (`backends(cluster=web, subcluster=dc1, address=x).weight: …`) and the previous snapshot
 *    keeps serving.
 * 4. `close()` stops the timer and closes the file; lookups keep answering from the last snapshot.
 *
 * The snapshot, its swap and every lookup live in `../lib/snapshot-book.ts`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';
import { isSwitchboardError, SwitchboardError } from '../../src/base/errors.ts';
import { duration } from '../../src/config/duration.ts';
import type { AddressBookFactory, PluginContext } from '../../src/contracts/plugin.ts';
import { BfeSnapshotBook } from '../bfe/bfe-snapshot-book.ts';
import type { Snapshot } from '../bfe/snapshot.ts';
import { LastGoodFile, lastGoodOption } from '../lib/last-good.ts';
import { runSliced, runToEnd, type Steps } from '../lib/sliced.ts';
import type { BookView } from '../lib/snapshot-book.ts';
import { readBfeSteps, readServerSteps, readStepsInTransaction } from './read.ts';
import { type ReadBase, readBfeChangedSteps } from './read-changed.ts';
import { Labels } from './relabel.ts';
import { compileBfeRead, compileBfeReadSliced, compileClassicRead, type StoreRead } from './view.ts';

const optionsSchema = z.strictObject({
  /** The database file, relative to the config file. */
  path: z.string().min(1),
  /** `bfe`: products, rules, clusters tables; `classic`: the `servers` host → backends list. */
  model: z.enum(['bfe', 'classic']).default('bfe'),
  pollInterval: duration.default(1000),
  /** Last-good cache file, relative to the config file (off when not set). */
  cache: lastGoodOption,
});

/** The options beside `name: sqlite`. */
export type SqliteBookOptions = z.output<typeof optionsSchema>;

/** The model's tables as steps (`../lib/sliced.ts`); `labelled`: with the path → row map. */
function readSteps(db: DatabaseSync, model: 'bfe' | 'classic', labelled: boolean): Steps<StoreRead> {
  return model === 'bfe' ? readBfeSteps(db, labelled) : readServerSteps(db, labelled);
}

/** One read transaction over the model's tables, with row labels, as steps. */
function readModel(db: DatabaseSync, model: 'bfe' | 'classic'): Steps<StoreRead> {
  return readStepsInTransaction<StoreRead>(db, readSteps(db, model, true));
}

/** Reads and compiles the whole database once (used by `db export` and the benchmarks). */
export function loadSqliteView(db: DatabaseSync, model: 'bfe' | 'classic', source: string): BookView {
  const read = runToEnd(readModel(db, model));
  return model === 'bfe' ? compileBfeRead(read, source) : compileClassicRead(read, source);
}

/** Store read → view; the BFE model compiles in time slices (`../lib/sliced.ts`). */
async function compileRead(
  read: StoreRead,
  model: 'bfe' | 'classic',
  source: string,
  previous?: Snapshot,
): Promise<BookView> {
  return model === 'bfe' ? compileBfeReadSliced(read, source, previous) : compileClassicRead(read, source);
}

/** The `sqlite` AddressBook instance (see the file header for its lifecycle). */
export class SqliteAddressBook extends BfeSnapshotBook {
  readonly #options: SqliteBookOptions;
  readonly #file: string;
  readonly #source: string;
  #db: DatabaseSync | undefined;
  #dataVersion = -1;
  /** The last read's input: its objects are kept for unchanged rows by the next read (`reuse-rows.ts`). */
  #lastInput: unknown;
  /**
   * The last read when it had no row problems and the file has a change log: the next read
   * reads only the products and clusters written since (`changes.ts`).
   */
  #base: ReadBase | undefined;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<boolean> | undefined;
  #closed = false;

  constructor(options: SqliteBookOptions, context: PluginContext) {
    const label = 'address-books.sqlite';
    const cache =
      options.cache === undefined
        ? undefined
        : new LastGoodFile(
            resolve(context.configDir, options.cache),
            { book: 'sqlite', source: `${options.model} ${options.path}` },
            context.logger,
            label,
          );
    super(label, context, cache);
    this.#options = options;
    this.#file = resolve(context.configDir, options.path);
    this.#source = `addressBook.path: ${options.path}`;
  }

  /**
   * Opens the database and loads the first snapshot; a bad row fails the start. A file that
   * cannot be opened or read (missing, locked): the last-good cache, when there is one, serves
   * until a poll reads the file.
   */
  async start(): Promise<void> {
    try {
      await this.#load(this.#open());
    } catch (e) {
      if (isSwitchboardError(e) && e.code === 'SWB_ERR_CONFIG') {
        this.#closeDb();
        throw e;
      }
      const error = isSwitchboardError(e)
        ? e
        : new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `${this.#source}: read: ${(e as Error).message}`);
      try {
        await this.startFromLastGood(
          error,
          (data) => compileRead(storeRead(data), this.#options.model, `${this.#source} (last-good cache)`),
          { book: 'sqlite', source: this.#file, version: 'last-good cache' },
        );
      } catch (failed) {
        this.#closeDb();
        throw failed;
      }
      // The polls that keep failing the same way are not logged again.
      this.lastError = error.message;
      this.#dataVersion = -1;
    }
    this.#timer = setInterval(() => void this.poll(), this.#options.pollInterval);
    this.#timer.unref();
  }

  /** Stops polling and closes the file; the last snapshot keeps answering. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#polling;
    this.#closeDb();
    await this.lastGood?.flushed();
  }

  /**
   * Checks `data_version` and rebuilds when another connection committed (or the file could
   * not be read before); resolves true on a swap. One poll runs at a time.
   */
  poll(): Promise<boolean> {
    if (this.#polling !== undefined || this.#closed) return Promise.resolve(false);
    this.#polling = this.#poll().finally(() => {
      this.#polling = undefined;
    });
    return this.#polling;
  }

  async #poll(): Promise<boolean> {
    try {
      const db = this.#db ?? this.#open();
      const v = readDataVersion(db);
      if (v === this.#dataVersion) return false;
      await this.#load(db, v);
      return true;
    } catch (e) {
      if (!isSwitchboardError(e)) this.#dataVersion = -1;
      // A database that stays busy fails every tick with the same message: log it once.
      if ((e as Error).message !== this.lastError) this.keepPrevious(e, 'reload failed');
      return false;
    }
  }

  /**
   * Reads and compiles the whole database and swaps it in; errors throw, nothing changes. One
   * read transaction spans the read and the compile: the rows are read without labels, and
   * only a table that does not compile is read again, with them, to name its rows.
   */
  async #load(db: DatabaseSync, version = readDataVersion(db)): Promise<void> {
    const model = this.#options.model;
    let read: StoreRead;
    let view: BookView;
    try {
      db.exec('BEGIN');
      try {
        read = await runSliced(this.#reloadSteps(db));
        view = await compileRead(read, model, this.#source, this.liveSnapshot).catch(async (e: unknown) => {
          if (!isSwitchboardError(e) || e.code !== 'SWB_ERR_CONFIG') throw e;
          read = await runSliced(readSteps(db, model, true));
          return compileRead(read, model, this.#source);
        });
      } finally {
        db.exec('COMMIT');
      }
    } finally {
      // Bad rows are not re-read until the next commit; a busy database (not a
      // SwitchboardError) is retried on the next tick (the catch sets -1).
      this.#dataVersion = version;
    }
    if (this.#closed && this.loaded) return;
    // The change log's revision is the file's own (any writer, any process); without a log,
    // `data_version` (this connection's count of other connections' commits) is all there is.
    const rev = this.#base?.position.rev;
    const own = rev === undefined ? `data_version ${version}` : `change ${rev}`;
    this.swapLive(view, read.input, { book: 'sqlite', source: this.#file, version: own });
  }

  /**
   * The read of a reload, without labels: the BFE model reads what the change log names since
   * the last read (or everything, `readBfeChangedSteps`), keeping the last read's objects for
   * unchanged rows; the classic model reads every row.
   */
  *#reloadSteps(db: DatabaseSync): Steps<StoreRead> {
    if (this.#options.model === 'classic') return yield* readServerSteps(db, false);
    const read = yield* readBfeChangedSteps(db, this.#base, this.#lastInput);
    this.#lastInput = read.input;
    const clean = read.position !== undefined && read.problems.length === 0;
    this.#base = clean ? { input: read.input, position: read.position! } : undefined;
    return read;
  }

  /** Opens the file read-only once; SWB_ERR_ADDRESS_BOOK when it cannot be opened. */
  #open(): DatabaseSync {
    if (this.#db !== undefined) return this.#db;
    try {
      // timeout 0: a locked database makes this poll skip, it never blocks the event loop.
      this.#db = new DatabaseSync(this.#file, { readOnly: true, timeout: 0 });
    } catch (e) {
      const why = existsSync(this.#file) ? `open: ${(e as Error).message}` : `open: file not found: ${this.#file}`;
      throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `${this.#source}: ${why}`);
    }
    return this.#db;
  }

  #closeDb(): void {
    this.#db?.close();
    this.#db = undefined;
  }
}

/** Cached input → a StoreRead (no row labels: the cache holds what compiled before). */
function storeRead(data: unknown): StoreRead {
  return { input: data, labels: new Labels(), problems: [] };
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
