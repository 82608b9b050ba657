/**
 * The `bfe` address book: lifecycle around one immutable Snapshot.
 *
 * The snapshot, its swap and every lookup live in `../lib/snapshot-book.ts`; this file only says
 * where the table comes from.
 *
 * 1. `start()` builds the first snapshot from the inline table, the `routes:` file or the
 *    `bfeConfDir:` directory; any error fails the start.
 * 2. For file sources, a stat-polling watcher (src/base/file-watch.ts, debounced) triggers a
 *    reload: read, build (in time slices, `../lib/sliced.ts`, so a big table never holds the
 *    event loop for the whole build), check; identical sources are a no-op.
 * 3. A good build replaces the snapshot reference and bumps `version`; a bad one is logged as a
 *    warning with every problem and the old snapshot keeps serving.
 * 4. `close()` stops the watcher; `findAddresses` keeps answering from the last snapshot.
 */
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SwitchboardError } from '../../src/base/errors.ts';
import { type FileWatcher, watchFiles } from '../../src/base/file-watch.ts';
import type { AddressBookFactory, PluginContext } from '../../src/contracts/plugin.ts';
import type { RoutesOrigin } from '../../src/contracts/types.ts';
import { JsonPieces } from '../lib/json-steps.ts';
import { readSourceBytes } from '../lib/read-source.ts';
import { runSliced } from '../lib/sliced.ts';
import { contentVersion, fileOrigin } from '../lib/source-version.ts';
import { loadBfeDir } from './bfe-json.ts';
import { BfeSnapshotBook } from './bfe-snapshot-book.ts';
import { compileRoutingTableSliced } from './compile.ts';
import { clusterSchema, productSchema, type RoutingTable, routingTableShape } from './routing-table.ts';
import type { Snapshot } from './snapshot.ts';

const optionsSchema = z
  .strictObject({
    routes: z.string().min(1).optional(),
    bfeConfDir: z.string().min(1).optional(),
    defaultProduct: routingTableShape.defaultProduct,
    conditions: routingTableShape.conditions,
    products: z.record(z.string().min(1), productSchema).optional(),
    clusters: z.record(z.string().min(1), clusterSchema).optional(),
  })
  .superRefine((o, ctx) => {
    const external = o.routes !== undefined ? 'routes' : o.bfeConfDir !== undefined ? 'bfeConfDir' : undefined;
    if (o.routes !== undefined && o.bfeConfDir !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['bfeConfDir'], message: 'give routes or bfeConfDir, not both' });
    }
    if (external === undefined) return;
    for (const key of ['defaultProduct', 'conditions', 'products', 'clusters'] as const) {
      if (o[key] !== undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: `must be in the ${external} source, not inline` });
    }
  });

/** The options beside `name: bfe`. */
export type BfeBookOptions = z.output<typeof optionsSchema>;

interface Loaded {
  /** Undefined when the source did not change since the last swap. */
  readonly snapshot: Snapshot | undefined;
  /** The routes file's bytes, or the BFE directory's fingerprint. */
  readonly fingerprint: Buffer | string;
  readonly files: readonly string[];
  /** Where the new snapshot came from (the `routes updated` line); with `snapshot`. */
  readonly origin?: RoutesOrigin;
}

/** The `bfe` AddressBook instance (see the file header for its lifecycle). */
export class BfeAddressBook extends BfeSnapshotBook {
  readonly #options: BfeBookOptions;
  #fingerprint: Buffer | string = '';
  #watcher: FileWatcher | undefined;
  #reloading: Promise<void> | undefined;
  #again = false;
  #closed = false;
  readonly #json = new JsonPieces();

  constructor(options: BfeBookOptions, context: PluginContext) {
    super('address-books.bfe', context);
    this.#options = options;
  }

  /** Loads the first snapshot (errors reject) and starts watching file sources. */
  async start(): Promise<void> {
    const loaded = await this.#load();
    this.#swap(loaded);
    if (loaded.files.length > 0 && !this.#closed) {
      this.#watcher = watchFiles(loaded.files, () => void this.reload());
    }
  }

  /** Stops watching; the current snapshot keeps answering. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#watcher?.close();
    this.#watcher = undefined;
    await this.#reloading;
  }

  /** The current plain-data routing table (undefined before `start`). */
  override routingTable(): RoutingTable | undefined {
    return super.routingTable() as RoutingTable | undefined;
  }

  /** Rebuilds from the source now; resolves true when a new snapshot was swapped in. */
  async reload(): Promise<boolean> {
    const before = this.version;
    if (this.#reloading !== undefined) {
      this.#again = true;
      await this.#reloading;
      return this.version !== before;
    }
    this.#reloading = this.#reloadLoop().finally(() => {
      this.#reloading = undefined;
    });
    await this.#reloading;
    return this.version !== before;
  }

  async #reloadLoop(): Promise<void> {
    do {
      this.#again = false;
      try {
        this.#swap(await this.#load());
        this.lastError = undefined;
      } catch (e) {
        this.keepPrevious(e, 'reload failed');
      }
    } while (this.#again && !this.#closed);
  }

  /**
   * The routes file's table: JSON from its bytes in time slices, reusing the unchanged products
   * and clusters of the previous parse (`../lib/json-steps.ts`); YAML at once.
   */
  async #parse(bytes: Buffer, file: string): Promise<unknown> {
    try {
      // The yaml parser is ~50x slower than JSON.parse on big generated tables.
      if (file.endsWith('.json')) return await runSliced(this.#json.parse(bytes));
      return parseYaml(bytes.toString('utf8')) ?? {};
    } catch (e) {
      const first = (e as Error).message.split('\n')[0];
      throw new SwitchboardError('SWB_ERR_CONFIG', `addressBook.routes: ${file}: ${first}`);
    }
  }

  #swap(loaded: Loaded): void {
    if (loaded.snapshot === undefined) return;
    this.#fingerprint = loaded.fingerprint;
    this.swap(loaded.snapshot, loaded.origin);
  }

  /** Reads and compiles the source; `snapshot` is undefined when the source did not change. */
  async #load(): Promise<Loaded> {
    const o = this.#options;
    const dir = this.context.configDir;
    if (o.routes !== undefined) {
      const file = resolve(dir, o.routes);
      const bytes = await readSourceBytes(file, 'addressBook.routes');
      const last = this.#fingerprint;
      if (this.loaded && typeof last !== 'string' && bytes.equals(last)) {
        return { snapshot: undefined, fingerprint: bytes, files: [file] };
      }
      const source = `addressBook.routes: ${o.routes}`;
      const previous = this.liveSnapshot;
      const snapshot = await compileRoutingTableSliced(await this.#parse(bytes, file), { source, previous });
      return { snapshot, fingerprint: bytes, files: [file], origin: await fileOrigin('bfe', file, bytes) };
    }
    if (o.bfeConfDir !== undefined) {
      const confDir = resolve(dir, o.bfeConfDir);
      const loaded = await loadBfeDir(confDir);
      if (this.loaded && loaded.fingerprint === this.#fingerprint) {
        return { snapshot: undefined, fingerprint: loaded.fingerprint, files: loaded.files };
      }
      for (const w of loaded.warnings) this.context.logger.warn(`address-books.bfe: ${w}`);
      const snapshot = await compileRoutingTableSliced(loaded.table, {
        source: `addressBook.bfeConfDir: ${o.bfeConfDir}`,
        previous: this.liveSnapshot,
      });
      const origin = { book: 'bfe', source: confDir, version: contentVersion(loaded.fingerprint) };
      return { snapshot, fingerprint: loaded.fingerprint, files: loaded.files, origin };
    }
    const { routes: _r, bfeConfDir: _b, ...table } = o;
    const snapshot = await compileRoutingTableSliced(table, { pathPrefix: 'addressBook' });
    // Inline routes change only with the config: the hash of the table names them.
    const origin = { book: 'bfe', source: 'config', version: contentVersion(JSON.stringify(table)) };
    return { snapshot, fingerprint: '', files: [], origin };
  }
}

/** The `bfe` address book factory (DESIGN "The three roles"). */
export const bfeAddressBook = {
  name: 'bfe',
  options: optionsSchema,
  create(options: BfeBookOptions, context: PluginContext): BfeAddressBook {
    return new BfeAddressBook(options, context);
  },
} satisfies AddressBookFactory;
