/**
 * What one background reload of a 10,000-host table costs the router's thread, in numbers that
 * hold on a busy machine (bench/reload-latency.ts measures the latency itself, but its p99 moves
 * with the machine's load): CPU time, garbage-collection pauses (scavenges, mark-compacts: their
 * count, sum and longest) and the heap kept.
 *
 * Each round runs one child process per tree and book (this tree, and SWB_BENCH_BASELINE's when
 * set, interleaved): the book is started on the table of bench/reload-latency.ts (1,000
 * products × 10 hosts, one cluster each), a loop allocates short-lived garbage the way request
 * handling does, and `--reloads` reloads each move one backend of one cluster (`sqlite`: a
 * commit and a poll; `bfe`: a rewrite of the `routes:` JSON file and a reload), each followed by
 * the runtime's registry and health-check sync (app/runtime/backend-sync.ts). Printed per tree
 * and book: the median over rounds of the per-reload means, and the minimum; "longest" columns
 * are the longest of the round (a turn: the event loop's delay, wall clock, so it also counts
 * the time the machine gave to other processes).
 *
 *   node bench/reload-gc.ts [--rounds 5] [--reloads 10] [--books sqlite,bfe]
 *   SWB_BENCH_BASELINE=/path/to/a/checkout node bench/reload-gc.ts
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { BackendEntry } from '../src/contracts/types.ts';
import { startReloadBook } from './lib/reload-book.ts';

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..');
const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    reloads: { type: 'string', default: '10' },
    books: { type: 'string', default: 'sqlite,bfe' },
    child: { type: 'string' },
    root: { type: 'string' },
    dir: { type: 'string' },
  },
});

interface Sample {
  cpuMs: number;
  wallMs: number;
  scavenges: number;
  scavengeMs: number;
  scavengeMaxMs: number;
  majors: number;
  majorMs: number;
  majorMaxMs: number;
  heapMB: number;
  longestTurnMs: number;
}

function table(port: number): Record<string, unknown> {
  const products: Record<string, unknown> = {};
  const clusters: Record<string, unknown> = {};
  for (let p = 0; p < 1000; p++) {
    const hosts = Array.from({ length: 10 }, (_, h) => `h${h}.p${p}.example.test`);
    products[`p${p}`] = { hosts, rules: [{ cond: 'default_t()', cluster: `c${p}` }] };
    const backends =
      p === 0 ? [{ address: `127.0.0.1:${port}` }] : [{ address: '127.0.0.1:9001' }, { address: '127.0.0.1:9002' }];
    clusters[`c${p}`] = { subclusters: { a: { weight: 1, backends } } };
  }
  return { products, clusters };
}

/** One child: start the book from `root`, reload `reloads` times under an allocation loop. */
async function child(book: 'sqlite' | 'bfe', root: string, dir: string, reloads: number): Promise<Sample> {
  const imp = (p: string) => import(pathToFileURL(join(root, p)).href);
  const { compileRoutingTable } = await imp('address-books/bfe/compile.ts');
  const { pino } = await import('pino');
  const { LocalRegistry } = await imp('src/registry/local.ts');
  const { seededRandom } = await imp('src/base/random.ts');
  const { HealthManager } = await imp('src/health/index.ts');
  const registry = new LocalRegistry();
  const health = new HealthManager(registry);
  // What the runtime runs after each swap (app/runtime/runtime.ts): the tree's BackendSync (in
  // app/runtime/ or, in older trees, app/), or (trees before it) the whole registry and health sync.
  const syncFile = ['app/runtime/backend-sync.ts', 'app/backend-sync.ts'].find((f) => existsSync(join(root, f))) ?? '';
  const syncer = syncFile.endsWith('.ts')
    ? new (await imp(syncFile)).BackendSync(registry, health)
    : {
        sync(book: { listBackends(): Iterable<BackendEntry> }) {
          const entries = [...book.listBackends()];
          registry.retain(entries);
          health.update(
            entries.map((e) => ({
              backend: e.backend,
              cluster: e.cluster,
              policy: e.policy.healthCheck,
              proxyProtocol: e.policy.proxyProtocol,
            })),
          );
        },
      };
  const context = {
    configDir: dir,
    registry,
    logger: pino({ level: 'silent' }),
    random: seededRandom(1),
    snapshotChanged: (book: { listBackends(): Iterable<BackendEntry> }) => syncer.sync(book),
  };
  const routes = (port: number) => compileRoutingTable(table(port)).table;
  const reload = await startReloadBook(book, imp, dir, context, routes);
  // Short-lived garbage between reload slices, as request handling makes (about 1 MB per 10 ms).
  // (The CPU time of single turns is not measured: on this kernel both getrusage and
  // /proc/thread-self/schedstat advance in 4 ms ticks.)
  let stop = false;
  let keep: unknown[] = [];
  const traffic = (async () => {
    while (!stop) {
      for (let i = 0; i < 500; i++) keep.push({ id: i, name: `r${i}`, parts: [i, i + 1] });
      if (keep.length > 5000) keep = [];
      await new Promise((r) => setImmediate(r));
    }
  })();
  for (let i = 0; i < 3; i++) await reload(9200 + (i % 2)); // warm-up
  const gcs: { kind: number; ms: number }[] = [];
  const obs = new PerformanceObserver((l) => {
    for (const e of l.getEntries())
      gcs.push({ kind: (e as unknown as { detail: { kind: number } }).detail.kind, ms: e.duration });
  });
  obs.observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < reloads; i++) await reload(9300 + (i % 2));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  delay.disable();
  await new Promise((r) => setTimeout(r, 50)); // the last gc entries
  obs.disconnect();
  stop = true;
  await traffic;
  health.close();
  const of = (kind: number) => gcs.filter((g) => (g.kind & kind) !== 0);
  const sum = (xs: { ms: number }[]) => xs.reduce((s, g) => s + g.ms, 0);
  const max = (xs: { ms: number }[]) => xs.reduce((s, g) => Math.max(s, g.ms), 0);
  const minor = of(1);
  const major = of(2 | 4);
  return {
    cpuMs: (cpu.user + cpu.system) / 1000 / reloads,
    wallMs: wallMs / reloads,
    scavenges: minor.length / reloads,
    scavengeMs: sum(minor) / reloads,
    scavengeMaxMs: max(minor),
    majors: major.length / reloads,
    majorMs: sum(major) / reloads,
    majorMaxMs: max(major),
    heapMB: liveHeapMB(),
    longestTurnMs: delay.max / 1e6,
  };
}

/** The heap in use after a full collection (the child runs with --expose-gc). */
function liveHeapMB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 1e6;
}

if (flags.child !== undefined) {
  const r = await child(flags.child as 'sqlite' | 'bfe', flags.root!, flags.dir!, Number(flags.reloads));
  console.log(JSON.stringify(r));
  process.exit(0);
}

const { tempDir } = await import('../test/harness/router.ts');
const { rm } = await import('node:fs/promises');
const trees: [string, string][] = [['switchboard', ROOT]];
if (process.env.SWB_BENCH_BASELINE !== undefined) trees.push(['baseline', resolve(process.env.SWB_BENCH_BASELINE)]);
const books = flags.books!.split(',');
const samples = new Map<string, Sample[]>();
const dir = await tempDir();
try {
  for (let round = 0; round < Number(flags.rounds); round++) {
    for (const book of books) {
      for (const [label, root] of round % 2 === 0 ? trees : [...trees].reverse()) {
        const work = join(dir, `${label}-${book}-${round}`);
        execFileSync('mkdir', ['-p', work]);
        const args = [fileURLToPath(import.meta.url), '--child', book, '--root', root, '--dir', work];
        const out = execFileSync(process.execPath, ['--expose-gc', ...args, '--reloads', flags.reloads!], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const key = `${label}, ${book}`;
        samples.set(key, [...(samples.get(key) ?? []), JSON.parse(out.trim().split('\n').at(-1)!) as Sample]);
      }
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const min = (xs: number[]) => Math.min(...xs);
const cols: [keyof Sample, string][] = [
  ['cpuMs', 'CPU ms'],
  ['wallMs', 'wall ms'],
  ['scavenges', 'scavenges'],
  ['scavengeMs', 'scavenge ms'],
  ['scavengeMaxMs', 'longest scav.'],
  ['majors', 'mark-compacts'],
  ['majorMs', 'mark-compact ms'],
  ['majorMaxMs', 'longest m-c'],
  ['longestTurnMs', 'longest turn'],
  ['heapMB', 'live heap MB'],
];
console.log(`per reload, median of ${flags.rounds} rounds (min in brackets), ${flags.reloads} reloads a round`);
console.log(`| tree, book | ${cols.map((c) => c[1]).join(' | ')} |`);
console.log(`| --- | ${cols.map(() => '---').join(' | ')} |`);
for (const [key, xs] of samples) {
  const cells = cols.map(([k]) => `${median(xs.map((x) => x[k])).toFixed(1)} (${min(xs.map((x) => x[k])).toFixed(1)})`);
  console.log(`| ${key} | ${cells.join(' | ')} |`);
}
