/**
 * The event-loop turns of a reload of the 10,000-host `sqlite` table, or with `--book bfe` of
 * the `bfe` book's JSON routes file (a rewrite of the file and `reload()`, as reload-gc.ts does)
 * (bench/README.md, reloads under load): the table, the allocation loop and the runtime's sync of bench/reload-gc.ts,
 * plus a `setImmediate` loop that times every turn. Per tree (this one, and
 * SWB_BENCH_BASELINE's when set, in interleaved child processes): per reload, the longest
 * turn (p25 / median / p75 / max over the reloads), the turns a reload spans and how many of
 * them took over 4 ms, the reload's wall time, and the runtime's sync; then the longest turns
 * of the run with the sync and the `gc` entries that fell in them. Wall clock: on a loaded
 * machine every number includes the time given to other processes (the counts and the lower
 * quantiles hold best).
 *
 *   node bench/reload-turns.ts [--rounds 3] [--reloads 24] [--book sqlite|bfe]
 *   SWB_BENCH_BASELINE=/path/to/a/checkout node bench/reload-turns.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { BackendEntry } from '../src/contracts/types.ts';
import { startReloadBook } from './lib/reload-book.ts';

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..');
const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    reloads: { type: 'string', default: '24' },
    book: { type: 'string', default: 'sqlite' },
    root: { type: 'string' },
    dir: { type: 'string' },
  },
});
if (flags.book !== 'sqlite' && flags.book !== 'bfe') {
  console.error(`reload-turns: --book must be sqlite or bfe, not ${flags.book}`);
  process.exit(2);
}
const BOOK: 'sqlite' | 'bfe' = flags.book;

interface Span {
  t0: number;
  t1: number;
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

/** One child: the book of `root` under the allocation loop, `reloads` reloads timed turn by turn. */
async function child(root: string, dir: string, reloads: number, which: 'sqlite' | 'bfe'): Promise<void> {
  const imp = (p: string) => import(pathToFileURL(join(root, p)).href);
  const { compileRoutingTable } = await imp('address-books/bfe/compile.ts');
  const { pino } = await import('pino');
  const { LocalRegistry } = await imp('src/registry/local.ts');
  const { seededRandom } = await imp('src/base/random.ts');
  const { HealthManager } = await imp('src/health/index.ts');
  const { BackendSync } = await imp('app/runtime/backend-sync.ts');
  const registry = new LocalRegistry();
  const health = new HealthManager(registry);
  const syncer = new BackendSync(registry, health);
  const syncs: Span[] = [];
  const context = {
    configDir: dir,
    registry,
    logger: pino({ level: 'silent' }),
    random: seededRandom(1),
    snapshotChanged: (book: { listBackends(): Iterable<BackendEntry> }) => {
      const t0 = performance.now();
      syncer.sync(book);
      syncs.push({ t0, t1: performance.now() });
    },
  };
  const routes = (port: number) => compileRoutingTable(table(port)).table;
  const reload = await startReloadBook(which, imp, dir, context, routes);
  // The allocation loop of reload-gc.ts, each turn timed.
  let stop = false;
  let keep: unknown[] = [];
  const turns: Span[] = [];
  const traffic = (async () => {
    let last = performance.now();
    while (!stop) {
      for (let i = 0; i < 500; i++) keep.push({ id: i, name: `r${i}`, parts: [i, i + 1] });
      if (keep.length > 5000) keep = [];
      await new Promise((r) => setImmediate(r));
      const now = performance.now();
      turns.push({ t0: last, t1: now });
      last = now;
    }
  })();
  for (let i = 0; i < 3; i++) await reload(9200 + (i % 2)); // warm-up
  const gcs: (Span & { kind: number })[] = [];
  const obs = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) {
      const kind = (e as unknown as { detail: { kind: number } }).detail.kind;
      gcs.push({ t0: e.startTime, t1: e.startTime + e.duration, kind });
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  turns.length = 0;
  syncs.length = 0;
  const spans: Span[] = [];
  for (let i = 0; i < reloads; i++) {
    const t0 = performance.now();
    await reload(9300 + (i % 2));
    spans.push({ t0, t1: performance.now() });
  }
  await new Promise((r) => setTimeout(r, 50));
  obs.disconnect();
  stop = true;
  await traffic;
  health.close();
  const ms = (s: Span) => s.t1 - s.t0;
  const longest: Span[] = [];
  let spanned = 0;
  let over4 = 0;
  for (const s of spans) {
    const mine = turns.filter((t) => t.t1 > s.t0 && t.t0 < s.t1);
    spanned += mine.length;
    over4 += mine.filter((t) => ms(t) > 4).length;
    longest.push(mine.reduce((a, t) => (ms(t) > ms(a) ? t : a), mine[0]!));
  }
  const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))]!;
  const l = longest.map(ms);
  const f = (x: number) => x.toFixed(1);
  console.log(
    `longest turn per reload p25/median/p75/max ${f(q(l, 0.25))} / ${f(q(l, 0.5))} / ${f(q(l, 0.75))} / ${f(q(l, 1))} ms;` +
      ` turns per reload ${f(spanned / reloads)}, over 4 ms ${(over4 / reloads).toFixed(2)};` +
      ` reload wall median ${f(q(spans.map(ms), 0.5))} ms; sync median ${q(syncs.map(ms), 0.5).toFixed(2)} ms`,
  );
  const inside = (t: Span) => (x: Span) => x.t0 >= t.t0 - 0.01 && x.t0 < t.t1;
  for (const t of [...new Set(longest)].sort((a, b) => ms(b) - ms(a)).slice(0, 5)) {
    const parts = [
      ...syncs.filter(inside(t)).map((s) => `sync ${f(ms(s))}`),
      ...gcs.filter(inside(t)).map((g) => `${g.kind === 1 ? 'scavenge' : `gc kind ${g.kind}`} ${f(ms(g))}`),
    ];
    console.log(`  ${f(ms(t))} ms: ${parts.join(', ') || 'no sync or gc in it'}`);
  }
}

if (flags.root !== undefined) {
  await child(flags.root, flags.dir!, Number(flags.reloads), BOOK);
  process.exit(0);
}

const { tempDir } = await import('../test/harness/router.ts');
const trees: [string, string][] = [['switchboard', ROOT]];
if (process.env.SWB_BENCH_BASELINE !== undefined) trees.push(['baseline', resolve(process.env.SWB_BENCH_BASELINE)]);
const dir = await tempDir();
try {
  for (let round = 0; round < Number(flags.rounds); round++) {
    for (const [label, root] of round % 2 === 0 ? trees : [...trees].reverse()) {
      const work = join(dir, `${label}-${round}`);
      mkdirSync(work, { recursive: true });
      const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
      console.log(`round ${round + 1}, ${label} (load ${load}):`);
      const args = [fileURLToPath(import.meta.url), '--root', root, '--dir', work, '--reloads', flags.reloads!];
      args.push('--book', flags.book!);
      process.stdout.write(
        execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }),
      );
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
