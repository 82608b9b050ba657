/**
 * The `file` address book (Switchboard classic): a YAML, JSON or CSV list of host pattern,
 * optional path prefix and backends. Loaded in `start()`, watched, and swapped whole on change;
 * a bad file keeps the previous list and logs why.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { type FileWatcher, watchFiles } from '../../src/base/file-watch.ts';
import type { AddressBookFactory, PluginContext } from '../../src/contracts/plugin.ts';
import type {
  AddressBook,
  BackendEntry,
  Candidates,
  DescribedRoutes,
  Request,
  RoutesInventory,
  RoutesOrigin,
  RoutingTableSource,
} from '../../src/contracts/types.ts';
import { readSourceFile } from '../lib/read-source.ts';
import { fileOrigin } from '../lib/source-version.ts';
import { matcherInventory } from './inventory.ts';
import { buildMatcher, type FileMatcher } from './matcher.ts';
import { type FileEntry, parseEntries } from './parse.ts';

const options = z.strictObject({
  path: z.string().min(1),
  watch: z.boolean().default(true),
});

interface Snapshot {
  readonly entries: readonly FileEntry[];
  readonly matcher: FileMatcher;
  readonly text: string;
  readonly origin: RoutesOrigin;
}

class FileBook implements AddressBook, RoutingTableSource, DescribedRoutes {
  readonly #path: string;
  readonly #watch: boolean;
  readonly #context: PluginContext;
  #snapshot: Snapshot | undefined;
  #watcher: FileWatcher | undefined;
  #version = 0;

  constructor(opts: z.output<typeof options>, context: PluginContext) {
    this.#path = resolve(context.configDir, opts.path);
    this.#watch = opts.watch;
    this.#context = context;
  }

  get version(): number {
    return this.#version;
  }

  async start(): Promise<void> {
    await this.#load();
    if (this.#watch) this.#watcher = watchFiles([this.#path], () => void this.#reload());
  }

  async close(): Promise<void> {
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  findAddresses(request: Request): Candidates | undefined {
    return this.#snapshot?.matcher.match(request.host, request.path);
  }

  routingTable(): unknown {
    return this.#snapshot?.entries;
  }

  /** The file, the hash of the text serving now and its mtime. */
  routesOrigin(): RoutesOrigin | undefined {
    return this.#snapshot?.origin;
  }

  routesInventory(): RoutesInventory | undefined {
    const s = this.#snapshot;
    return s === undefined ? undefined : matcherInventory(s.matcher);
  }

  async #load(): Promise<void> {
    const text = await readSourceFile(this.#path, 'addressBook.path');
    if (text === this.#snapshot?.text) return;
    const entries = parseEntries(text, this.#path);
    const origin = await fileOrigin('file', this.#path, text);
    this.#snapshot = Object.freeze({ entries: Object.freeze(entries), matcher: buildMatcher(entries), text, origin });
    this.#version++;
    this.#context.snapshotChanged?.(this);
  }

  /** Every backend of the current list with its entry's policy. */
  *listBackends(): Iterable<BackendEntry> {
    for (const c of this.#snapshot?.matcher.all ?? []) {
      for (const backend of c.subclusters[0]!.backends) yield { backend, policy: c.policy, cluster: c.cluster };
    }
  }

  async #reload(): Promise<void> {
    try {
      // A new list is logged by the runtime (`routes updated`, with the file's hash and counts).
      await this.#load();
    } catch (e) {
      this.#context.logger.warn(
        { book: 'file', path: this.#path, err: (e as Error).message },
        'address book reload failed; keeping the previous list',
      );
    }
  }
}

/** The `file` book factory: `addressBook: { name: file, path: servers.yaml }`. */
export const fileAddressBook = {
  name: 'file',
  options,
  create: (opts: z.output<typeof options>, context: PluginContext) => new FileBook(opts, context),
} satisfies AddressBookFactory;
