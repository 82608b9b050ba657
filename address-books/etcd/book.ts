/**
 * The `etcd` address book (README.md): routes kept in etcd, one key per product, cluster and
 * backend under a prefix; every instance pointed at the same etcd applies the same updates.
 *
 * 1. `start()` reads every key under the prefix in one range request (one revision), compiles
 *    the snapshot with the bfe book's compiler, and fails the start if etcd is unreachable or a
 *    key is bad.
 * 2. A watch from the next revision applies each response's events to an in-memory key map.
 *    Responses arrive whole, so the map always equals the store at some revision.
 * 3. The first event arms a short timer (`debounce`); when it fires, the map is compiled and
 *    swapped in whole. A bad key is logged with its name and the previous snapshot stays.
 * 4. When etcd goes away the watch reconnects with exponential backoff (`reconnect`) and resumes
 *    from the last revision it saw, so changes made meanwhile are replayed; the last good
 *    snapshot serves throughout. If the watch cannot resume (history compacted), the book
 *    reads everything again and starts a new watch.
 * 5. `close()` cancels the watch, timers and the client; lookups keep the last snapshot.
 *
 * The snapshot, its swap and every lookup live in `../lib/snapshot-book.ts`.
 */
import type { Etcd3, IWatchResponse, Watcher } from 'etcd3';
import { z } from 'zod';
import { duration } from '../../src/config/duration.ts';
import { isSwitchboardError, SwitchboardError } from '../../src/errors.ts';
import type { AddressBookFactory, PluginContext } from '../../src/plugin.ts';
import { type BookView, SnapshotBook } from '../lib/snapshot-book.ts';
import { compileBfeRead } from '../sqlite/view.ts';
import { connectEtcd, exponentialBackoff } from './client.ts';
import { keysToRead, normalisePrefix } from './layout.ts';

const optionsSchema = z.strictObject({
  endpoints: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  prefix: z.string().min(1).default('/switchboard/'),
  debounce: duration.default(50),
  dialTimeout: duration.default(2000),
  reconnect: z
    .strictObject({ initial: duration.default(100), max: duration.default(5000) })
    .default({ initial: 100, max: 5000 }),
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
export class EtcdAddressBook extends SnapshotBook {
  readonly #options: EtcdBookOptions;
  readonly #prefix: string;
  readonly #source: string;
  #client: Etcd3 | undefined;
  #watcher: Watcher | undefined;
  #kvs = new Map<string, string>();
  #debounce: NodeJS.Timeout | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** The etcd revision the key map reflects. */
  revision = 0;
  /** The revision the current snapshot was compiled from. */
  snapshotRevision = 0;
  /** False while the watch is disconnected (the last good snapshot keeps serving). */
  connected = false;

  constructor(options: EtcdBookOptions, context: PluginContext) {
    super('address-books.etcd', context);
    this.#options = options;
    this.#prefix = normalisePrefix(options.prefix);
    this.#source = `address-books.etcd: ${this.#prefix}`;
  }

  /** Loads every key, compiles the first snapshot (errors reject) and starts the watch. */
  async start(): Promise<void> {
    const o = this.#options;
    const endpoints = typeof o.endpoints === 'string' ? [o.endpoints] : o.endpoints;
    this.#client = connectEtcd({ endpoints, dialTimeout: o.dialTimeout, reconnect: o.reconnect });
    try {
      await this.#resync(true);
    } catch (e) {
      this.#client.close();
      this.#client = undefined;
      if (isSwitchboardError(e)) throw e;
      throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `${this.#source}: ${(e as Error).message}`);
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
    this.#client?.close();
    this.#client = undefined;
  }

  /** Full read → compile → swap, then a watch from the next revision. */
  async #resync(first: boolean): Promise<void> {
    const client = this.#client!;
    const { kvs, revision } = await readPrefix(client, this.#prefix);
    this.#kvs = kvs;
    this.revision = revision;
    if (first) this.#swap(compileBfeRead(keysToRead(kvs, this.#prefix), this.#source));
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

  #rebuild(): void {
    if (this.revision === this.snapshotRevision) return;
    try {
      this.#swap(compileBfeRead(keysToRead(this.#kvs, this.#prefix), this.#source));
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      this.keepPrevious(e, 'update rejected', { revision: this.revision });
    }
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
    this.context.logger.warn({ error: e.message }, 'address-books.etcd: watch failed, reloading everything');
    this.#resyncTimer = setTimeout(() => {
      this.#resync(false).catch((err: Error) => this.#watchFailed(err, backoff.next()));
    }, backoff.duration);
  }

  #swap(view: BookView): void {
    this.snapshotRevision = this.revision;
    this.swap(view);
  }
}

/** The `etcd` address book factory: `addressBook: { name: etcd, endpoints: [http://127.0.0.1:2379] }`. */
export const etcdAddressBook = {
  name: 'etcd',
  options: optionsSchema,
  create(options: EtcdBookOptions, context: PluginContext): EtcdAddressBook {
    return new EtcdAddressBook(options, context);
  },
} satisfies AddressBookFactory;
