/**
 * Micro-benchmarks of the `bfe` address book on a generated table: 10,000 hosts, 10,000 basic
 * rules and 1,000 advanced rules (1,000 products × 10 hosts × 10 basic rules + 1 advanced rule).
 * Prints snapshot build time and memory, host lookup and full `findAddresses` medians.
 *
 *   node bench/address-book-bfe.ts
 *
 * Targets (not tests): findAddresses host + basic hit ≤ 2 µs median; build ≤ 500 ms; ≤ 50 MiB.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { compileRoutingTable } from '../address-books/bfe/compile.ts';
import type { Snapshot } from '../address-books/bfe/snapshot.ts';
import type { Request } from '../src/contracts/types.ts';
import { createRequest } from '../src/request/request.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const PRODUCTS = 1000;
const HOSTS_PER_PRODUCT = 10;

function generate(): Record<string, unknown> {
  const products: Record<string, unknown> = {};
  const clusters: Record<string, unknown> = {};
  for (let p = 0; p < PRODUCTS; p++) {
    const hosts = Array.from({ length: HOSTS_PER_PRODUCT }, (_, h) => `h${h}.p${p}.example.test`);
    hosts[HOSTS_PER_PRODUCT - 1] = `*.w${p}.example.test`;
    const basicRules = hosts.map((host, h) => ({ hosts: [host], paths: [`/s${h}/*`], cluster: `c${p}` }));
    products[`p${p}`] = { hosts, basicRules, rules: [{ cond: `req_path_prefix_in("/api", false)`, cluster: `c${p}` }] };
    clusters[`c${p}`] = {
      subclusters: {
        a: {
          weight: 70,
          backends: [{ address: `10.1.${p >> 8}.${p & 255}:80` }, { address: `10.2.${p >> 8}.${p & 255}:80` }],
        },
        b: { weight: 30, backends: [{ address: `10.3.${p >> 8}.${p & 255}:80` }] },
      },
    };
  }
  return { products, clusters };
}

function request(host: string, path: string): Request {
  return createRequest({
    protocol: 'http1',
    host,
    path,
    clientIp: '192.0.2.1',
    clientPort: 1,
    localIp: '127.0.0.1',
    localPort: 80,
    listener: 'b',
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** Median ns per call over batches of `reqs.length` calls. */
function perCall(fn: (r: Request) => unknown, reqs: readonly Request[], batches = 40): number {
  let sink = 0;
  for (let i = 0; i < 3; i++) for (const r of reqs) if (fn(r) !== undefined) sink++;
  const times: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t = process.hrtime.bigint();
    for (const r of reqs) if (fn(r) !== undefined) sink++;
    times.push(Number(process.hrtime.bigint() - t) / reqs.length);
  }
  if (sink < 0) console.log(sink);
  return median(times);
}

const table = generate();
const builds: number[] = [];
let snapshot: Snapshot | undefined;
gc();
const heapBefore = process.memoryUsage().heapUsed;
for (let i = 0; i < 5; i++) {
  snapshot = undefined;
  gc();
  const t = performance.now();
  snapshot = compileRoutingTable(table);
  builds.push(performance.now() - t);
}
gc();
const heap = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
const snap = snapshot!;

const N = 10_000;
const pick = (i: number) => [i % PRODUCTS, (i * 7) % (HOSTS_PER_PRODUCT - 1)] as const;
const basicHits = Array.from({ length: N }, (_, i) => {
  const [p, h] = pick(i);
  return request(`h${h}.p${p}.example.test`, `/s${h}/file.css`);
});
const advancedHits = Array.from({ length: N }, (_, i) => {
  const [p, h] = pick(i);
  return request(`h${h}.p${p}.example.test`, '/api/v1');
});
const wildcardHits = Array.from({ length: N }, (_, i) => request(`x.y.w${i % PRODUCTS}.example.test`, '/api/x'));
const misses = Array.from({ length: N }, (_, i) => request(`nope${i}.example.invalid`, '/'));

const check = snap.findAddresses(basicHits[3]!);
if (check?.rule === undefined || !check.rule.includes('basicRules'))
  throw new Error('benchmark table does not route as expected');

const rows: [string, string][] = [
  [
    'table',
    `${PRODUCTS * HOSTS_PER_PRODUCT} hosts, ${PRODUCTS * HOSTS_PER_PRODUCT} basic rules, ${PRODUCTS} advanced rules`,
  ],
  ['snapshot build (median of 5)', `${median(builds).toFixed(1)} ms`],
  ['snapshot heap', `${heap.toFixed(1)} MiB`],
  ['host lookup (exact)', `${perCall((r) => snap.hosts.lookup(r.host), basicHits).toFixed(0)} ns`],
  ['host lookup (wildcard, depth 2)', `${perCall((r) => snap.hosts.lookup(r.host), wildcardHits).toFixed(0)} ns`],
  ['findAddresses host + basic hit', `${perCall((r) => snap.findAddresses(r), basicHits).toFixed(0)} ns`],
  ['findAddresses basic miss → advanced', `${perCall((r) => snap.findAddresses(r), advancedHits).toFixed(0)} ns`],
  ['findAddresses wildcard → advanced', `${perCall((r) => snap.findAddresses(r), wildcardHits).toFixed(0)} ns`],
  ['findAddresses no product', `${perCall((r) => snap.findAddresses(r), misses).toFixed(0)} ns`],
];
const width = Math.max(...rows.map((r) => r[0].length));
for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
