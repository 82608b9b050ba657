/**
 * `npm run bench`: every scenario on every target, interleaved, for several rounds; prints a
 * table of medians with ratios, writes bench/results/{results.json,chart.svg}.
 *
 * 1. Start the backend (nginx, or a tuned Node server) and every available target, each in
 *    its own process; a missing peer is skipped with a line saying so.
 * 2. Warm every target, then for each round, for each scenario, measure each target in turn
 *    (A B C A B C…), so drift on the machine hits every target alike.
 * 3. Stop everything (always, even on failure), then summarise: medians, ratios against the
 *    direct backend and the bare Node pipe, the table, the JSON and the chart.
 *
 * Flags: --duration S (per measurement, default 5), --rounds N (3), --scenarios a,b,
 * --targets a,b, --idle N (4000), --loadgen wrk|autocannon, --backend nginx|node,
 * --out DIR (bench/results; --out none writes nothing), --profile (Node targets run with
 * --cpu-prof into OUT/profiles).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Backend, startBackend } from './lib/backend.ts';
import { renderChart } from './lib/chart.ts';
import { defaultLoadgen, runLoad } from './lib/loadgen.ts';
import { createSpawner } from './lib/proc.ts';
import { SCENARIOS } from './lib/scenarios.ts';
import { SMALL_PATH } from './lib/scenarios-shared.ts';
import { type Cell, formatTable, type Row, summarise } from './lib/stats.ts';
import { ROOT, TARGETS } from './lib/targets.ts';
import type { BenchContext, Running, Target } from './lib/types.ts';

/** What one bench run does. */
export interface BenchOptions {
  readonly durationSec: number;
  readonly rounds: number;
  readonly scenarios?: readonly string[];
  readonly targets?: readonly string[];
  readonly idleConnections: number;
  readonly loadgen?: 'wrk' | 'autocannon';
  readonly backend?: 'nginx' | 'node';
  /** Where results.json and chart.svg go; undefined writes nothing. */
  readonly outDir?: string;
  readonly profile?: boolean;
  readonly warmupSec?: number;
  readonly log?: (line: string) => void;
}

/** What a run produced, plus every pid it spawned (all stopped by the time it returns). */
export interface BenchResult {
  readonly rows: Row[];
  readonly skipped: { target: string; reason: string }[];
  readonly spawned: readonly number[];
  readonly meta: Record<string, unknown>;
}

const BASELINES = ['direct', 'node-pipe'];

function pick<T extends { name: string }>(all: readonly T[], names: readonly string[] | undefined, what: string): T[] {
  if (names === undefined) return [...all];
  return names.map((n) => {
    const found = all.find((x) => x.name === n);
    if (found === undefined)
      throw new Error(`bench: unknown ${what} ${n} (known: ${all.map((x) => x.name).join(', ')})`);
    return found;
  });
}

/** Runs the benchmark described by `options`. */
export async function runBench(options: BenchOptions): Promise<BenchResult> {
  const log = options.log ?? ((l: string) => console.log(l));
  const scenarios = pick(SCENARIOS, options.scenarios, 'scenario');
  const loadgen = options.loadgen ?? defaultLoadgen();
  const spawn = createSpawner();
  const dir = await mkdtemp(join(tmpdir(), 'swb-bench-'));
  const profileDir = options.outDir === undefined ? join(dir, 'profiles') : join(options.outDir, 'profiles');
  const nodeFlags = options.profile === true ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const skipped: { target: string; reason: string }[] = [];
  const cells: Cell[] = [];
  const running = new Map<Target, Running>();
  let backend: Backend | undefined;
  try {
    backend = await startBackend(dir, spawn, options.backend === 'node' ? 'node' : undefined);
    log(`backend: ${backend.kind} on 127.0.0.1:${backend.port}; load generator: ${loadgen}`);
    const ctx: BenchContext = { backendPort: backend.port, backendPids: backend.pids(), dir, nodeFlags, spawn };
    for (const t of pick(TARGETS, options.targets, 'target')) {
      const reason = t.available();
      if (reason !== undefined) {
        skipped.push({ target: t.name, reason });
        log(`skipping ${t.name}: ${reason}`);
        continue;
      }
      try {
        running.set(t, await t.start(ctx));
      } catch (e) {
        skipped.push({ target: t.name, reason: (e as Error).message });
        log(`skipping ${t.name}: ${(e as Error).message}`);
      }
    }
    const warmupSec = options.warmupSec ?? 1;
    for (const r of running.values()) {
      const url = `http://127.0.0.1:${r.port}${SMALL_PATH}`;
      await runLoad({ url, connections: 16, durationSec: warmupSec, close: false }, loadgen, spawn);
    }
    for (const s of scenarios)
      for (const t of running.keys()) cells.push({ scenario: s.name, target: t.name, rounds: [] });
    const measure = { durationSec: options.durationSec, loadgen, spawn, idleConnections: options.idleConnections };
    for (let round = 1; round <= options.rounds; round++) {
      for (const s of scenarios) {
        for (const [t, r] of running) {
          const target = s.fresh ? await t.start(ctx) : r;
          try {
            const m = await s.measure(target, measure);
            cells.find((c) => c.scenario === s.name && c.target === t.name)?.rounds.push(m);
            log(`round ${round}/${options.rounds} ${s.name} ${t.name}: ${m.value.toFixed(2)} ${m.unit}`);
          } finally {
            if (s.fresh) await target.stop();
          }
        }
      }
    }
  } finally {
    for (const r of running.values()) await r.stop();
    await backend?.stop();
    await spawn.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
  const rows = summarise(cells, BASELINES);
  const meta = {
    date: new Date().toISOString(),
    command: `node bench/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, memGiB: Math.round(totalmem() / 2 ** 30) },
    node: process.version,
    loadgen,
    backend: backend?.kind,
    durationSec: options.durationSec,
    rounds: options.rounds,
    idleConnections: options.idleConnections,
    skipped,
  };
  log('');
  log(formatTable(rows, BASELINES));
  if (options.outDir !== undefined) {
    await mkdir(options.outDir, { recursive: true });
    await writeFile(join(options.outDir, 'results.json'), `${JSON.stringify({ meta, rows }, null, 2)}\n`);
    const titles = Object.fromEntries(SCENARIOS.map((s) => [s.name, s.title]));
    const caption = `Switchboard bench, ${meta.date.slice(0, 10)}: ${meta.machine.cores} × ${meta.machine.cpu}, Node ${meta.node}, ${loadgen}, medians of ${options.rounds} × ${options.durationSec}s`;
    await writeFile(join(options.outDir, 'chart.svg'), renderChart(rows, titles, caption, 'node-pipe'));
    log(`\nwrote ${join(options.outDir, 'results.json')} and chart.svg`);
  }
  return { rows, skipped, spawned: spawn.spawned, meta };
}

function list(s: string | undefined): string[] | undefined {
  return s === undefined ? undefined : s.split(',').filter((x) => x !== '');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      scenarios: { type: 'string' },
      targets: { type: 'string' },
      idle: { type: 'string', default: '4000' },
      loadgen: { type: 'string' },
      backend: { type: 'string' },
      out: { type: 'string', default: join(ROOT, 'bench', 'results') },
      profile: { type: 'boolean', default: false },
    },
  });
  const loadgen = values.loadgen;
  if (loadgen !== undefined && loadgen !== 'wrk' && loadgen !== 'autocannon')
    throw new Error('bench: --loadgen wrk|autocannon');
  const backend = values.backend;
  if (backend !== undefined && backend !== 'nginx' && backend !== 'node')
    throw new Error('bench: --backend nginx|node');
  await runBench({
    durationSec: Number(values.duration),
    rounds: Number(values.rounds),
    idleConnections: Number(values.idle),
    profile: values.profile,
    ...(values.out === 'none' ? {} : { outDir: resolve(values.out) }),
    ...(loadgen === undefined ? {} : { loadgen }),
    ...(backend === undefined ? {} : { backend }),
    ...(values.scenarios === undefined ? {} : { scenarios: list(values.scenarios) as string[] }),
    ...(values.targets === undefined ? {} : { targets: list(values.targets) as string[] }),
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(ROOT, 'bench', 'run.ts')) {
  main().catch((e: unknown) => {
    console.error((e as Error).message);
    process.exit(1);
  });
}
