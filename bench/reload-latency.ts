/**
 * Request latency while a 10,000-host routing table is rebuilt under load (issue 17 item 12):
 * does a reload stall traffic?
 *
 * 1. A backend process listens on two ports (each answer says which, `x-port`).
 * 2. The router runs as its own process (`bin/switchboard.js start`, `net` panel, per-request
 *    routing, access log off) with a 10,000-host table (1,000 products × 10 hosts, one advanced
 *    rule, one cluster of two backends each) in
 *    - `sqlite`: a SQLite file (`pollInterval: 100ms`); a reload is a commit from this process;
 *    - `bfe`: a `routes:` JSON file, watched; a reload is a rewrite of the file.
 * 3. `wrk -t1 -c32` sends keep-alive requests for one host for `--duration` seconds, three times:
 *    `before` (no reload), `during` (reloads back to back: each one moves host h0.p0 to the
 *    other backend port, and the next starts once the router answers from it), `after`.
 * 4. Printed: p50 / p99 / max latency and req/s of each phase, how many reloads went live
 *    during the `during` phase, and the median time from the write to the change being live.
 *
 *   node bench/reload-latency.ts [--duration 5] [--books sqlite,bfe] [--interval MS] [--check [--margin M]]
 *   --interval: start a reload every MS ms (or once the last is live, if later) instead of back to
 *   back, so trees whose reloads take different times are loaded alike
 *   --check: exits 1 when a book's p99 during reloads is past bench/targets.json's
 *   `reload.p99DuringOverBeforeMax` × its p99 before, by more than the margin (default: noise)
 *   SWB_BENCH_BASELINE=/path/to/a/checkout node bench/reload-latency.ts   # adds that tree's router
 */
import { writeFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compileRoutingTable } from '../address-books/bfe/compile.ts';
import type { RoutingTable } from '../address-books/bfe/routing-table.ts';
import { initDatabase } from '../address-books/sqlite/schema.ts';
import { writeRoutingTable } from '../address-books/sqlite/write.ts';
import { tempDir } from '../test/harness/router.ts';
import { judgeGuard, loadTargets, targetsFile } from './lib/check.ts';
import { createSpawner, freePort, waitForPort, which } from './lib/proc.ts';

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..');
const PRODUCTS = 1000;
const HOSTS = 10;

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    books: { type: 'string', default: 'sqlite,bfe' },
    check: { type: 'boolean', default: false },
    margin: { type: 'string' },
    interval: { type: 'string', default: '0' },
  },
});
const DURATION = Number(flags.duration);
/** Milliseconds from one reload's write to the next (0: back to back, each once the last is live). */
const INTERVAL = Number(flags.interval);
const BOOKS = flags.books!.split(',') as ('sqlite' | 'bfe')[];

function generate(ports: readonly [number, number]): RoutingTable {
  const products: Record<string, unknown> = {};
  const clusters: Record<string, unknown> = {};
  for (let p = 0; p < PRODUCTS; p++) {
    const hosts = Array.from({ length: HOSTS }, (_, h) => `h${h}.p${p}.example.test`);
    products[`p${p}`] = { hosts, rules: [{ cond: 'default_t()', cluster: `c${p}` }] };
    const backends =
      p === 0
        ? [{ address: `127.0.0.1:${ports[0]}` }]
        : [{ address: `127.0.0.1:${ports[0]}` }, { address: `127.0.0.1:${ports[1]}` }];
    clusters[`c${p}`] = { subclusters: { a: { weight: 1, backends } } };
  }
  return compileRoutingTable({ products, clusters }).table;
}

const BACKEND = `
const http = require('node:http');
for (const port of process.argv.slice(1).map(Number)) {
  http.createServer({ keepAliveTimeout: 300000 }, (req, res) => {
    res.writeHead(200, { 'content-length': 2, 'x-port': String(port) });
    res.end('ok');
  }).listen(port, '127.0.0.1');
}
process.on('SIGTERM', () => process.exit(0));
`;

const LUA = `
done = function(summary, latency, requests)
  io.write(string.format('{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status))
end
`;

interface Phase {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

/** The x-port of one request for `host` through the router (a new connection each time). */
function portOf(port: number, host: string): Promise<string> {
  return new Promise((done, fail) => {
    const req = request({ port, host: '127.0.0.1', path: '/', headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => done(String(res.headers['x-port'])));
    });
    req.on('error', fail);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const spawn = createSpawner();
const wrk = which('wrk');
if (wrk === undefined) throw new Error('bench: reload-latency needs wrk');
const dir = await tempDir();
const lua = join(dir, 'report.lua');
writeFileSync(lua, LUA);

async function load(port: number): Promise<Phase> {
  const args = ['-t1', '-c32', `-d${DURATION}s`, '-H', 'Host: h5.p500.example.test', '-s', lua];
  const child = spawn.start(wrk!, [...args, `http://127.0.0.1:${port}/`]);
  await child.exited;
  const line = child
    .stdout()
    .split('\n')
    .find((l) => l.startsWith('{'));
  if (line === undefined) throw new Error(`bench: wrk printed no result: ${child.stderr()}`);
  const r = JSON.parse(line) as Record<string, number>;
  return {
    rps: r.requests! / (r.durationUs! / 1e6),
    p50: r.p50Us! / 1000,
    p99: r.p99Us! / 1000,
    max: r.maxUs! / 1000,
    errors: r.errors!,
  };
}

async function run(root: string, label: string, book: 'sqlite' | 'bfe'): Promise<{ before: Phase; during: Phase }> {
  const ports = [await freePort(), await freePort()] as const;
  const backend = spawn.start(process.execPath, ['-e', BACKEND, ...ports.map(String)]);
  await waitForPort(ports[1], backend, 'backend');
  const table = generate(ports);
  const work = join(dir, `${label}-${book}`);
  await mkdir(work, { recursive: true });
  let flip: (to: number) => void;
  let addressBook: string;
  let done: () => void = () => undefined;
  if (book === 'sqlite') {
    const file = join(work, 'routes.db');
    const db = new DatabaseSync(file);
    initDatabase(db);
    writeRoutingTable(db, table);
    addressBook = '{ name: sqlite, path: routes.db, pollInterval: 100ms }';
    flip = (to) => db.exec(`UPDATE backends SET address = '127.0.0.1:${to}' WHERE cluster = 'c0'`);
    done = () => db.close();
  } else {
    const file = join(work, 'routes.json');
    await writeFile(file, JSON.stringify(table));
    addressBook = '{ name: bfe, routes: routes.json }';
    flip = (to) => {
      const c0 = table.clusters.c0!.subclusters.a!;
      c0.backends[0] = { address: `127.0.0.1:${to}`, weight: 1 };
      writeFileSync(file, JSON.stringify(table));
    };
  }
  const port = await freePort();
  const config = join(work, 'switchboard.yaml');
  await writeFile(
    config,
    [
      'panel: net',
      'routing: per-request',
      `listeners: [{ name: web, address: "127.0.0.1:${port}" }]`,
      `addressBook: ${addressBook}`,
      'log: { level: warn, access: off }',
      '',
    ].join('\n'),
  );
  const router = spawn.start(process.execPath, [join(root, 'bin', 'switchboard.js'), 'start', '--config', config], {
    cwd: work,
  });
  await waitForPort(port, router, `router (${label})`, 60_000);
  await load(port); // warm-up
  const before = await load(port);
  let reloads = 0;
  const toLive: number[] = [];
  let stop = false;
  const reloader = (async () => {
    let to = 1;
    while (!stop) {
      const t0 = performance.now();
      flip(ports[to]!);
      while (!stop && (await portOf(port, 'h0.p0.example.test')) !== String(ports[to])) await sleep(10);
      if (stop) break;
      toLive.push(performance.now() - t0);
      reloads++;
      to = 1 - to;
      const rest = t0 + INTERVAL - performance.now();
      if (rest > 0 && !stop) await sleep(rest);
    }
  })();
  const during = await load(port);
  stop = true;
  await reloader;
  await sleep(1000);
  const after = await load(port);
  await router.stop();
  await backend.stop();
  done();
  const sorted = [...toLive].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1).padStart(7);
  console.log(`\n${label}, ${book} book, ${PRODUCTS * HOSTS} hosts, wrk -t1 -c32 ${DURATION}s per phase`);
  console.log('phase      req/s     p50 ms  p99 ms  max ms  errors');
  for (const [name, p] of [
    ['before', before],
    ['during', during],
    ['after', after],
  ] as const) {
    console.log(`${name.padEnd(8)} ${p.rps.toFixed(0).padStart(7)} ${f(p.p50)} ${f(p.p99)} ${f(p.max)}  ${p.errors}`);
  }
  console.log(
    `reloads live during 'during': ${reloads}; write → live median ${(sorted[sorted.length >> 1] ?? 0).toFixed(0)} ms`,
  );
  return { before, during };
}

/** `--check`: p99 during reloads against the targets file's multiple of p99 before. */
function checkReload(book: string, r: { before: Phase; during: Phase }): boolean {
  const targets = loadTargets(targetsFile(ROOT));
  const limit = targets.reload?.p99DuringOverBeforeMax;
  if (limit === undefined) return true;
  const ratio = r.during.p99 / r.before.p99;
  const status = judgeGuard(
    ratio,
    { scenario: 'reload', target: book, vs: 'before', max: limit, guard: limit },
    margin(targets),
  );
  console.log(`check ${book}: p99 during / before = ${ratio.toFixed(2)} (≤ ${limit}): ${status}`);
  return status !== 'regressed';
}
const margin = (t: { noise: number }) => Number(flags.margin ?? t.noise);

try {
  const baseline = process.env.SWB_BENCH_BASELINE;
  for (const book of BOOKS) {
    const mine = await run(ROOT, 'switchboard', book);
    if (flags.check && !checkReload(book, mine)) process.exitCode = 1;
    if (baseline !== undefined) await run(resolve(baseline), 'baseline', book);
  }
} finally {
  await spawn.stopAll();
  await rm(dir, { recursive: true, force: true });
}
