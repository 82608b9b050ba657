/**
 * Where a 10,000-host snapshot rebuild spends its time, phase by phase (median of 5 each), on the
 * two generated tables the other book benchmarks use:
 *
 * - `bfe`: 1,000 products × 10 hosts, 10 basic rules and 1 advanced rule each (bench/address-book-bfe.ts);
 * - `db`: 1,000 products × 10 hosts, 1 advanced rule each (bench/db-books.ts), read from SQLite
 *   and from an etcd-shaped key map (no etcd process needed: `tableToKeys` → `keysToRead`).
 *
 * Phases: store read (SQLite rows / etcd key map → input), schema validation alone, the full
 * compile (validation + hosts + rule trees + conditions), the longest event-loop turn of the
 * time-sliced compile (`compileRoutingTableSliced`), what the last-good cache costs
 * (JSON.stringify of the input), and the sqlite book's whole background rebuild (longest turn).
 *
 *   node bench/reload-phases.ts
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import { compileRoutingTable, compileRoutingTableSliced } from '../address-books/bfe/compile.ts';
import { routingTableSchema } from '../address-books/bfe/routing-table.ts';
import { keysToRead, tableToKeys } from '../address-books/etcd/layout.ts';
import { type SqliteAddressBook, sqliteAddressBook } from '../address-books/sqlite/book.ts';
import { inReadTransaction, readBfeRows } from '../address-books/sqlite/read.ts';
import { initDatabase } from '../address-books/sqlite/schema.ts';
import { writeRoutingTable } from '../address-books/sqlite/write.ts';
import { seededRandom } from '../src/base/random.ts';
import { LocalRegistry } from '../src/registry/local.ts';
import { tempDir } from '../test/harness/router.ts';

const PRODUCTS = 1000;
const HOSTS = 10;

function generate(basic: boolean): Record<string, unknown> {
  const products: Record<string, unknown> = {};
  const clusters: Record<string, unknown> = {};
  for (let p = 0; p < PRODUCTS; p++) {
    const hosts = Array.from({ length: HOSTS }, (_, h) => `h${h}.p${p}.example.test`);
    const rules = [{ cond: basic ? 'req_path_prefix_in("/api", false)' : 'default_t()', cluster: `c${p}` }];
    const basicRules = hosts.map((host, h) => ({ hosts: [host], paths: [`/s${h}/*`], cluster: `c${p}` }));
    products[`p${p}`] = basic ? { hosts, basicRules, rules } : { hosts, rules };
    const backends = [{ address: `10.1.${p >> 8}.${p & 255}:80` }, { address: `10.2.${p >> 8}.${p & 255}:80` }];
    clusters[`c${p}`] = { subclusters: { a: { weight: 1, backends } } };
  }
  return { products, clusters };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function time(run: () => unknown, n = 5): number {
  const runs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    run();
    runs.push(performance.now() - t0);
  }
  return median(runs);
}

/** The longest event-loop stall while `run` is in progress (one measurement per run, median). */
async function longestTurn(run: () => Promise<unknown>, n = 5): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < n; i++) {
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    await run();
    h.disable();
    runs.push(h.max / 1e6);
  }
  return median(runs);
}

const rows: [string, number][] = [];
for (const [name, input] of [
  ['bfe', generate(true)],
  ['db', generate(false)],
] as const) {
  rows.push([`${name}: schema validation only`, time(() => routingTableSchema.parse(input))]);
  rows.push([`${name}: full compile (validation included)`, time(() => compileRoutingTable(input))]);
  rows.push([`${name}: sliced compile, longest turn`, await longestTurn(() => compileRoutingTableSliced(input))]);
  const t0 = performance.now();
  for (let i = 0; i < 5; i++) await compileRoutingTableSliced(input);
  rows.push([`${name}: sliced compile, wall time (mean)`, (performance.now() - t0) / 5]);
  rows.push([`${name}: JSON.stringify of the input (cache write)`, time(() => JSON.stringify(input))]);
}

const table = routingTableSchema.parse(generate(false));
const dir = await tempDir();
const file = join(dir, 'phases.db');
const w = new DatabaseSync(file);
initDatabase(w);
writeRoutingTable(w, table);
w.close();
const db = new DatabaseSync(file, { readOnly: true });
rows.push(['sqlite: read transaction → input', time(() => inReadTransaction(db, () => readBfeRows(db)))]);
db.close();
// The book itself: a commit, then one poll (sliced read + sliced compile + swap + cache save).
const book = sqliteAddressBook.create(sqliteAddressBook.options.parse({ path: 'phases.db', pollInterval: 3_600_000 }), {
  configDir: dir,
  registry: new LocalRegistry(),
  logger: pino({ level: 'silent' }),
  random: seededRandom(1),
}) as SqliteAddressBook;
await book.start();
const w2 = new DatabaseSync(file);
let n = 0;
const commit = () => w2.exec(`UPDATE backends SET weight = ${(n++ % 5) + 1} WHERE cluster = 'c0'`);
rows.push([
  'sqlite book: poll after a commit, longest turn',
  await longestTurn(async () => {
    commit();
    await book.poll();
  }),
]);
const t1 = performance.now();
for (let i = 0; i < 5; i++) {
  commit();
  await book.poll();
}
rows.push(['sqlite book: poll after a commit, wall time', (performance.now() - t1) / 5]);
w2.close();
await book.close();
await rm(dir, { recursive: true, force: true });
const kvs = tableToKeys(table, '/p/');
rows.push([`etcd: ${kvs.size} keys → input (keysToRead)`, time(() => keysToRead(kvs, '/p/'))]);

const width = Math.max(...rows.map((r) => r[0].length));
console.log(`${PRODUCTS * HOSTS} hosts, ${PRODUCTS} products, ${PRODUCTS} clusters; median of 5`);
for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v.toFixed(1)} ms`);
