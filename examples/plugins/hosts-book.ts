import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { AddressBookFactory, FileWatcher, PluginContext } from 'switchboard/plugin';
import { compileRoutingTable, SnapshotBook, watchFiles, z } from 'switchboard/plugin';

/** `hosts.json`: `{ "www.example.test": ["127.0.0.1:9001", "127.0.0.1:9002"] }`, a cluster per host. */
const hostsFile = z.record(z.string(), z.array(z.string()).min(1));

async function load(file: string) {
  const hosts = Object.entries(hostsFile.parse(JSON.parse(await readFile(file, 'utf8'))));
  const products = hosts.map(([host]) => [host, { hosts: [host], basicRules: [{ hosts: [host], cluster: host }] }]);
  const backends = (ids: string[]) => ids.map((address) => ({ address }));
  const clusters = hosts.map(([host, ids]) => [host, { subclusters: { all: { weight: 1, backends: backends(ids) } } }]);
  const table = { products: Object.fromEntries(products), clusters: Object.fromEntries(clusters) };
  return compileRoutingTable(table, { source: `load ${file}` }); // validated: each error names its key
}

class HostsBook extends SnapshotBook {
  #file = '';
  #watcher: FileWatcher | undefined;
  async start(): Promise<void> {
    this.swap(await load(this.#file)); // the first load must succeed
    this.#watcher = watchFiles([this.#file], () => {
      load(this.#file).then(
        (view) => this.swap(view),
        (e) => this.keepPrevious(e, `${this.#file} not loaded`),
      );
    });
  }
  async close(): Promise<void> {
    this.#watcher?.close();
  }
  static create(o: { path: string }, ctx: PluginContext): HostsBook {
    const book = new HostsBook('address-books.hosts', ctx);
    book.#file = resolve(ctx.configDir, o.path);
    return book;
  }
}

export default {
  name: 'hosts',
  options: z.strictObject({ path: z.string().min(1) }),
  create: HostsBook.create,
} satisfies AddressBookFactory;
