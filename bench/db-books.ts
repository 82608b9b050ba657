/**
 * Benchmarks of the store-backed address books on a generated table of 10,000 hosts
 * (1,000 products × 10 hosts, one advanced rule and one cluster of two backends each):
 *
 * 1. SQLite: snapshot rebuild (one read transaction + compile), median of 5.
 * 2. etcd: snapshot rebuild from a full range read, median of 5 (needs /usr/bin/etcd).
 * 3. etcd: time from a write to the change being live on two book instances, median and p99
 *    over 100 updates (each update moves one host's cluster to a new backend).
 *
 *   node bench/db-books.ts
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Etcd3 } from 'etcd3';
import { pino } from 'pino';
import { compileRoutingTable } from '../address-books/bfe/compile.ts';
import { type EtcdAddressBook, etcdAddressBook, readPrefix } from '../address-books/etcd/book.ts';
import { keysToRead } from '../address-books/etcd/layout.ts';
import { etcdImportTable } from '../address-books/etcd/store.ts';
import { loadSqliteView } from '../address-books/sqlite/book.ts';
import { initDatabase } from '../address-books/sqlite/schema.ts';
import { compileBfeRead } from '../address-books/sqlite/view.ts';
import { writeRoutingTable } from '../address-books/sqlite/write.ts';
import { seededRandom } from '../src/base/random.ts';
import { LocalRegistry } from '../src/registry/local.ts';
import { requestFor } from '../test/conformance/address-book.ts';
import { etcdBinary, startEtcd } from '../test/harness/etcd.ts';
import { tempDir } from '../test/harness/router.ts';

const PRODUCTS = 1000;
const HOSTS = 10;

function generate() {
  const products: Record<string, unknown> = {};
  const clusters: Record<string, unknown> = {};
  for (let p = 0; p < PRODUCTS; p++) {
    const hosts = Array.from({ length: HOSTS }, (_, h) => `h${h}.p${p}.example.test`);
    products[`p${p}`] = { hosts, rules: [{ cond: 'default_t()', cluster: `c${p}` }] };
    const backends = [{ address: `10.1.${p >> 8}.${p & 255}:80` }, { address: `10.2.${p >> 8}.${p & 255}:80` }];
    clusters[`c${p}`] = { subclusters: { a: { weight: 1, backends } } };
  }
  return compileRoutingTable({ products, clusters }).table;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

function time(run: () => void): number {
  const t0 = performance.now();
  run();
  return performance.now() - t0;
}

const table = generate();
const ms = (n: number) => `${n.toFixed(1)} ms`;

// 1. SQLite
const dir = await tempDir();
const file = join(dir, 'bench.db');
const db = new DatabaseSync(file);
initDatabase(db);
writeRoutingTable(db, table);
db.close();
const reader = new DatabaseSync(file, { readOnly: true });
const sqliteRuns = Array.from({ length: 5 }, () => time(() => loadSqliteView(reader, 'bfe', 'bench')));
reader.close();
await rm(dir, { recursive: true, force: true });
console.log(`sqlite: rebuild of ${PRODUCTS * HOSTS} hosts: median ${ms(median(sqliteRuns))}`);

// 2 and 3. etcd
if (etcdBinary() === undefined) {
  console.log('etcd: skipped (etcd is not installed)');
} else {
  const etcd = await startEtcd();
  const client = new Etcd3({ hosts: etcd.endpoint });
  const prefix = '/bench/';
  await etcdImportTable(client, table, prefix);
  const etcdRuns: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const { kvs } = await readPrefix(client, prefix);
    compileBfeRead(keysToRead(kvs, prefix), 'bench');
    etcdRuns.push(performance.now() - t0);
  }
  console.log(`etcd: rebuild of ${PRODUCTS * HOSTS} hosts (range read + compile): median ${ms(median(etcdRuns))}`);

  const makeBook = () =>
    etcdAddressBook.create(etcdAddressBook.options.parse({ endpoints: etcd.endpoint, prefix, debounce: '5ms' }), {
      configDir: '/',
      registry: new LocalRegistry(),
      logger: pino({ level: 'silent' }),
      random: seededRandom(1),
    }) as EtcdAddressBook;
  const books = [makeBook(), makeBook()];
  await Promise.all(books.map((b) => b.start()));
  const latencies: number[] = [];
  for (let i = 0; i < 100; i++) {
    const p = i % PRODUCTS;
    const address = `10.9.${i >> 8}.${i & 255}:80`;
    const req = requestFor(`h0.p${p}.example.test`);
    const live = () => books.every((b) => b.findAddresses(req)?.subclusters[0]?.backends.some((x) => x.id === address));
    const t0 = performance.now();
    await client.put(`${prefix}backends/c${p}/a/${address}`).value('{}');
    while (!live()) await new Promise((r) => setImmediate(r));
    latencies.push(performance.now() - t0);
  }
  console.log(
    `etcd: write → live on 2 instances over 100 updates: median ${ms(median(latencies))}, p99 ${ms(percentile(latencies, 99))}`,
  );
  await Promise.all(books.map((b) => b.close()));
  client.close();
  await etcd.close();
}
