/**
 * The `etcd` address book (README.md): routes kept in etcd, one key per product, cluster and
 * backend under a prefix; every instance pointed at the same etcd applies the same updates.
 *
 * 1. `start()` reads every key under the prefix in one range request (one revision), compiles
 *    the snapshot with the bfe book's compiler, and fails the start if a key is bad. If etcd is
 *    unreachable, the start fails too, unless a last-good cache (`cache:`) exists: then the book
 *    serves the cached routes, logged as stale with their age, and keeps trying etcd with
 *    backoff (`reconnect`); the first good read replaces them (`../lib/last-good.ts`).
 * 2. A watch from the next revision applies each response's events to an in-memory key map.
 *    Responses arrive whole, so the map always equals the store at some revision.
 * 3. The first event arms a short timer (`debounce`); when it fires, the map is compiled (in
 *    time slices, `../lib/sliced.ts`, one build at a time) and swapped in whole, and its input
 *    is saved to the last-good cache. A bad key is logged with its name and the previous
 *    snapshot stays.
 * 4. When etcd goes away the watch reconnects with exponential backoff (`reconnect`) and resumes
 *    from the last revision it saw, so changes made meanwhile are replayed; the last good
 *    snapshot serves throughout. If the watch cannot resume (history compacted), the book
 *    reads everything again and starts a new watch.
 * 5. `close()` cancels the watch, timers and the client; lookups keep the last snapshot.
 *
 * The snapshot, its swap and every lookup live in `../lib/snapshot-book.ts`.
 */

import { resolve } from 'node:path';
import type { Etcd3, IWatchResponse, Watcher } from 'etcd3';
import { z } from 'zod';
import { isSwitchboardError, SwitchboardError } from '../../src/base/errors.ts';
import { duration } from '../../src/config/duration.ts';
import type { AddressBookFactory, PluginContext } from '../../src/contracts/plugin.ts';
import { BfeSnapshotBook } from '../bfe/bfe-snapshot-book.ts';
import { LastGoodFile, lastGoodOption } from '../lib/last-good.ts';
import { Labels } from '../sqlite/relabel.ts';
import { compileBfeReadSliced, type StoreRead } from '../sqlite/view.ts';
import { type Backoff, connectEtcd, exponentialBackoff } from './client.ts';
import { keysToRead, normalisePrefix } from './layout.ts';

const optionsSchema = z.strictObject({
  endpoints: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  prefix: z.string().min(1).default('/switchboard/'),
  debounce: duration.default(50),
  dialTimeout: duration.default(2000),
  reconnect: z
    .strictObject({ initial: duration.default(100), max: duration.default(5000) })
    .default({ initial: 100, max: 5000 }),
  /** Last-good cache file, relative to the config file (off when not set). */
  cache: lastGoodOption,
});

/** The options beside `name: etcd`. */
export type EtcdBookOptions = z.output<typeof optionsSchema>;

/** Reads every key under `prefix` at one revision. */
export async function readPrefix(
  client: Etcd3,
  prefix: string,
): Promise<{ kvs: Map<string, string>; revision: number }> {
  const res = await client.getAll().prefix(prefix).exec();
  const kvs = new Map<string, string>();
  for (const kv of res.kvs) kvs.set(kv.key.toString(), kv.value.toString());
  return { kvs, revision: Number(res.header.revision) };
}

/** The `etcd` AddressBook instance (see the file header for its lifecycle). */
export class EtcdAddressBook extends BfeSnapshotBook {
  readonly #options: EtcdBookOptions;
  readonly #prefix: string;
  readonly #source: string;
  #client: Etcd3 | undefined;
  #watcher: Watcher | undefined;
  #kvs = new Map<string, string>();
  #debounce: NodeJS.Timeout | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  #building: Promise<void> | undefined;
  #again = false;
  #closed = false;
  /** The etcd revision the key map reflects. */
  revision = 0;
  /** The revision the current snapshot was compiled from. */
  snapshotRevision = 0;
  /** False while the watch is disconnected (the last good snapshot keeps serving). */
  connected = false;

  constructor(options: EtcdBookOptions, context: PluginContext) {
    const prefix = normalisePrefix(options.prefix);
    const label = 'address-books.etcd';
    const cache =
      options.cache === undefined
        ? undefined
        : new LastGoodFile(
            resolve(context.configDir, options.cache),
            { book: 'etcd', source: `prefix ${prefix}` },
            context.logger,
            label,
          );
    super(label, context, cache);
    this.#options = options;
    this.#prefix = prefix;
    this.#source = `addressBook.prefix: ${this.#prefix}`;
  }

  /**
   * Loads every key, compiles the first snapshot (errors reject) and starts the watch. etcd
   * unreachable: starts from the last-good cache when there is one (see the file header).
   */
  async start(): Promise<void> {
    const o = this.#options;
    const endpoints = typeof o.endpoints === 'string' ? [o.endpoints] : o.endpoints;
    this.#client = connectEtcd({ endpoints, dialTimeout: o.dialTimeout, reconnect: o.reconnect });
    try {
      await this.#resync(true);
    } catch (e) {
      // A bad key, or a watch that failed after a live snapshot: the start fails, as always.
      const outage = !isSwitchboardError(e) && !this.loaded;
      const error = isSwitchboardError(e)
        ? e
        : new SwitchboardError(
            'SWB_ERR_ADDRESS_BOOK',
            `addressBook.endpoints: ${endpoints.join(',')}: ${(e as Error).message.split('\n')[0]}`,
            // The store's own error: the CLI exits 1 (runtime), not 3 (config) (app/exit.ts).
            { cause: e },
          );
      try {
        if (!outage) throw error;
        await this.startFromLastGood(
          error,
          (data) => compileBfeReadSliced(storeRead(data), `${this.#source} (last-good cache)`),
          { book: 'etcd', source: this.#prefix, version: 'last-good cache' },
        );
      } catch (failed) {
        this.#client.close();
        this.#client = undefined;
        throw failed;
      }
      this.#retry(exponentialBackoff(o.reconnect.initial, o.reconnect.max));
    }
  }

  /** Cancels the watch and timers and closes the client; the last snapshot keeps answering. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#debounce);
    clearTimeout(this.#resyncTimer);
    const watcher = this.#watcher;
    this.#watcher = undefined;
    await watcher?.cancel().catch(() => undefined);
    await this.#building;
    this.#client?.close();
    this.#client = undefined;
    await this.lastGood?.flushed();
  }

  /** Full read → compile → swap, then a watch from the next revision. */
  async #resync(first: boolean): Promise<void> {
    const client = this.#client!;
    const { kvs, revision } = await readPrefix(client, this.#prefix);
    this.#kvs = kvs;
    this.revision = revision;
    if (first) await this.#build();
    else this.#rebuild();
    if (this.#closed) return;
    const watcher = await client
      .watch()
      .prefix(this.#prefix)
      .startRevision(String(revision + 1))
      .create();
    if (this.#closed) {
      await watcher.cancel();
      return;
    }
    this.#watcher = watcher;
    this.connected = true;
    watcher.on('data', (res: IWatchResponse) => this.#apply(res));
    watcher.on('disconnected', () => this.#disconnected());
    watcher.on('connected', () => this.#reconnected());
    watcher.on('error', (e: Error) => this.#watchFailed(e));
  }

  #apply(res: IWatchResponse): void {
    if (res.events.length === 0) return;
    for (const ev of res.events) {
      const key = ev.kv.key.toString();
      if (ev.type === 'Delete') this.#kvs.delete(key);
      else this.#kvs.set(key, ev.kv.value.toString());
    }
    this.revision = Number(res.header.revision);
    if (this.#debounce === undefined && !this.#closed) {
      this.#debounce = setTimeout(() => {
        this.#debounce = undefined;
        this.#rebuild();
      }, this.#options.debounce);
    }
  }

  /** Compiles the key map in the background, one build at a time (a change meanwhile runs again). */
  #rebuild(): void {
    if (this.#building !== undefined) {
      this.#again = true;
      return;
    }
    this.#building = this.#rebuildLoop().finally(() => {
      this.#building = undefined;
    });
  }

  async #rebuildLoop(): Promise<void> {
    do {
      this.#again = false;
      if (this.revision === this.snapshotRevision) continue;
      try {
        await this.#build();
      } catch (e) {
        if (!isSwitchboardError(e)) throw e;
        this.keepPrevious(e, 'update rejected', { revision: this.revision });
      }
    } while (this.#again && !this.#closed);
  }

  /** Key map → snapshot (time-sliced) → swap at the revision it was read at; errors throw. */
  async #build(): Promise<void> {
    const revision = this.revision;
    const read = keysToRead(this.#kvs, this.#prefix);
    const view = await compileBfeReadSliced(read, this.#source, this.liveSnapshot);
    if (this.#closed && this.loaded) return;
    this.snapshotRevision = revision;
    this.swapLive(view, read.input, { book: 'etcd', source: this.#prefix, version: `revision ${revision}` });
  }

  #disconnected(): void {
    if (!this.connected) return;
    this.connected = false;
    this.context.logger.warn(
      { revision: this.revision },
      'address-books.etcd: watch disconnected, serving the last routes',
    );
  }

  #reconnected(): void {
    if (this.connected) return;
    this.connected = true;
    this.context.logger.info({ revision: this.revision }, 'address-books.etcd: watch resumed');
  }

  /** The watch cannot continue (e.g. compacted history): read everything again, with backoff. */
  #watchFailed(e: Error, backoff = exponentialBackoff(this.#options.reconnect.initial, this.#options.reconnect.max)) {
    this.connected = false;
    const old = this.#watcher;
    this.#watcher = undefined;
    void old?.cancel().catch(() => undefined);
    if (this.#closed) return;
    // While serving from the cache, every retry fails the same way: warn once (at start).
    if (this.staleSince === undefined) {
      this.context.logger.warn({ error: e.message }, 'address-books.etcd: watch failed, reloading everything');
    }
    this.#retry(backoff);
  }

  /** Reads everything again after `backoff`, and keeps retrying (longer each time) until it works. */
  #retry(backoff: Backoff): void {
    if (this.#closed) return;
    this.#resyncTimer = setTimeout(() => {
      this.#resync(false).catch((err: Error) => this.#watchFailed(err, backoff.next()));
    }, backoff.duration);
  }
}

/** Cached input → a StoreRead (no row labels: the cache holds what compiled before). */
function storeRead(data: unknown): StoreRead {
  return { input: data, labels: new Labels(), problems: [] };
}

/** The `etcd` address book factory: `addressBook: { name: etcd, endpoints: [http://127.0.0.1:2379] }`. */
export const etcdAddressBook = {
  name: 'etcd',
  options: optionsSchema,
  create(options: EtcdBookOptions, context: PluginContext): EtcdAddressBook {
    return new EtcdAddressBook(options, context);
  },
} satisfies AddressBookFactory;
