/**
 * `npm run bench`: every scenario on every target, interleaved, for several rounds; prints a
 * table of medians with ratios, writes bench/results/{results.json,chart.svg}.
 *
 * 1. Group by group (HTTP/1.1, TLS passthrough, HTTP/2: bench/lib/groups.ts), start the group's
 *    backend (nginx, or a Node server) and every selected, available target, each in its own
 *    process; a missing peer or tool is skipped with a line saying so.
 * 2. Warm every target on every scenario it runs, then for each round, for each scenario, measure
 *    each target in turn (A B C, then B C A, C A B…: each round starts a share further down the
 *    list), so drift on the machine and the place in the order hit every target alike.
 * 3. Stop everything (always, even on failure), then summarise: medians, ratios against the
 *    direct backend and the bare Node pipe, the table, the JSON and the chart.
 *
 * Flags: --duration S (per measurement, default 5), --warmup S (per scenario and target before
 * the rounds; default each scenario's own: 5 for new connections, else 1; times the thread count
 * of a worker-panel row), --preroll S (unmeasured load on the target right before each
 * measurement, default 1; times the thread count; 0: none), --rounds N (3), --scenarios a,b,
 * --targets a,b, --suite default|scaling|all, --idle N (4000), --loadgen wrk|autocannon, --backend nginx|node,
 * --paired (the pivot, node-pipe or node-h2-proxy, measured right before every other row; its
 * ratio column is then the median of those per-round ratios),
 * --out DIR (bench/results; --out none writes nothing), --profile (Node targets run with
 * --cpu-prof into OUT/profiles), --check [--strict] [--margin M] [--targets-file F] (judge the
 * run against bench/targets.json: bench/lib/check.ts), --quick (the short check CI runs).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { benchHelp } from './help.ts';
import { renderChart } from './lib/chart.ts';
import { check, failed, formatVerdicts, loadTargets, type Targets, targetsFile } from './lib/check.ts';
import { cpuSpeeds, spread } from './lib/cpu-speed.ts';
import { cpuWindow } from './lib/cpu-time.ts';
import { GROUPS } from './lib/groups.ts';
import { defaultLoadgen } from './lib/loadgen.ts';
import { createSpawner } from './lib/proc.ts';
import { SCENARIOS } from './lib/scenarios.ts';
import { timeWaitSockets } from './lib/sockstat.ts';
import { type Cell, formatTable, type Row, summarise } from './lib/stats.ts';
import { ROOT, SCALING } from './lib/targets.ts';
import type { BenchContext, MeasureOptions, Metric, Running, Scenario, Target } from './lib/types.ts';

/** What one bench run does. */
export interface BenchOptions {
  readonly durationSec: number;
  readonly rounds: number;
  readonly scenarios?: readonly string[];
  readonly targets?: readonly string[];
  /** A named selection of scenarios and targets (`SUITES`); --scenarios/--targets override it. */
  readonly suite?: string;
  readonly idleConnections: number;
  readonly loadgen?: 'wrk' | 'autocannon';
  readonly backend?: 'nginx' | 'node';
  /** Where results.json and chart.svg go; undefined writes nothing. */
  readonly outDir?: string;
  readonly profile?: boolean;
  /** Seconds of warm-up per scenario and target, overriding each scenario's own (`--warmup S`). */
  readonly warmupSec?: number;
  /**
   * Seconds of the same load, unmeasured, right before every measurement (`--preroll S`,
   * default 1; times a worker-panel row's thread count; 0: none): a Node process that sat idle
   * while the other targets ran is slower for its first thousands of connections
   * (bench/README.md "Idle between rows").
   */
  readonly prerollSec?: number;
  /** `--paired`: the pivot (node-pipe, node-h2-proxy) is measured right before every other row. */
  readonly paired?: boolean;
  readonly log?: (line: string) => void;
}

/** What a run produced, plus every pid it spawned (all stopped by the time it returns). */
export interface BenchResult {
  readonly rows: Row[];
  readonly skipped: { target: string; reason: string }[];
  readonly spawned: readonly number[];
  readonly meta: Record<string, unknown>;
}

/** A named selection: scenarios and targets (undefined: all), and whether optional targets join. */
interface Suite {
  readonly scenarios?: readonly string[];
  readonly targets?: readonly string[];
  readonly optional: boolean;
}

/** `--suite`: `default` (every non-optional target), `scaling` (issue 11's rows), `all`. */
export const SUITES: Readonly<Record<string, Suite>> = {
  default: { optional: false },
  scaling: {
    scenarios: SCALING,
    targets: [
      'direct',
      'node-pipe',
      'switchboard-net',
      'switchboard-worker-1',
      'switchboard-worker-2',
      'switchboard-worker-4',
      'haproxy-tcp',
      'haproxy-tcp-nbthread-2',
      'haproxy-tcp-nbthread-4',
    ],
    optional: true,
  },
  all: { optional: true },
};

const BASELINES = ['direct', 'node-pipe', 'node-h2-proxy'];

const groupOf = (s: Scenario) => s.group ?? 'http1';
const supports = (t: Target, s: Scenario) => t.scenarios === undefined || t.scenarios.includes(s.name);

function pickScenarios(names: readonly string[] | undefined): Scenario[] {
  if (names === undefined) return [...SCENARIOS];
  return names.map((n) => {
    const found = SCENARIOS.find((x) => x.name === n);
    if (found === undefined)
      throw new Error(`bench: unknown scenario ${n} (known: ${SCENARIOS.map((x) => x.name).join(', ')})`);
    return found;
  });
}

/** Every target name of every group. */
const knownTargets = () => new Set(GROUPS.flatMap((g) => g.targets.map((t) => t.name)));

/** Which targets run: named ones (checked against every group), else the suite's rule. */
function targetFilter(names: readonly string[] | undefined, optional: boolean): (t: Target) => boolean {
  if (names === undefined) return (t) => optional || t.optional !== true;
  const known = knownTargets();
  for (const n of names)
    if (!known.has(n)) throw new Error(`bench: unknown target ${n} (known: ${[...known].join(', ')})`);
  return (t) => names.includes(t.name);
}

/** Runs the benchmark described by `options`. */
export async function runBench(options: BenchOptions): Promise<BenchResult> {
  const log = options.log ?? ((l: string) => console.log(l));
  const suite = SUITES[options.suite ?? 'default'];
  if (suite === undefined)
    throw new Error(`bench: unknown suite ${options.suite} (known: ${Object.keys(SUITES).join(', ')})`);
  const scenarios = pickScenarios(options.scenarios ?? suite.scenarios);
  const wanted = targetFilter(options.targets ?? suite.targets, suite.optional);
  const loadgen = options.loadgen ?? defaultLoadgen();
  const spawn = createSpawner();
  const dir = await mkdtemp(join(tmpdir(), 'swb-bench-'));
  const profileDir = options.outDir === undefined ? join(dir, 'profiles') : join(options.outDir, 'profiles');
  const nodeFlags = options.profile === true ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const skipped: { target: string; reason: string }[] = [];
  const skip = (what: string, reason: string) => {
    skipped.push({ target: what, reason });
    log(`skipping ${what}: ${reason}`);
  };
  const cells: Cell[] = [];
  const backends: Record<string, string> = {};
  const measure = {
    durationSec: options.durationSec,
    loadgen,
    spawn,
    idleConnections: options.idleConnections,
    dir,
  };
  try {
    for (const group of GROUPS) {
      const mine = scenarios.filter((s) => {
        if (groupOf(s) !== group.name) return false;
        const reason = s.available?.(loadgen);
        if (reason !== undefined) skip(`scenario ${s.name}`, reason);
        return reason === undefined;
      });
      if (mine.length === 0) continue;
      const reason = group.available();
      if (reason !== undefined) {
        for (const s of mine) skip(`scenario ${s.name}`, reason);
        continue;
      }
      const targets = group.targets.filter((t) => wanted(t) && mine.some((s) => supports(t, s)));
      if (targets.length === 0) continue;
      const label = (t: Target) => (group.name === 'http1' ? t.name : `${t.name} (${group.name})`);
      const running = new Map<Target, Running>();
      let backend: (Running & { kind: string; altPort?: number }) | undefined;
      try {
        backend = await group.startBackend(dir, spawn, options.backend === 'node' ? 'node' : undefined);
        backends[group.name] = backend.kind;
        log(
          `${group.name === 'http1' ? '' : `${group.name} `}backend: ${backend.kind} on 127.0.0.1:${backend.port}; load generator: ${group.loadgen ?? loadgen}`,
        );
        const ctx: BenchContext = {
          backendPort: backend.port,
          backendPids: backend.pids(),
          dir,
          nodeFlags,
          spawn,
          ...(backend.altPort === undefined ? {} : { backendAltPort: backend.altPort }),
        };
        for (const t of targets) {
          const why = t.available();
          if (why !== undefined) {
            skip(label(t), why);
            continue;
          }
          try {
            running.set(t, await t.start(ctx));
          } catch (e) {
            skip(label(t), (e as Error).message);
          }
        }
        // Every scenario warms every target it measures: a Node target's accept → connect → close
        // path runs unoptimised until V8 has seen it ~10,000 times (bench/README.md "Warm-up"); a
        // target with several event loops (worker threads) warms that many times as long.
        for (const [t, r] of running)
          for (const s of mine) {
            if (s.fresh || !supports(t, s)) continue;
            const warm = { ...measure, durationSec: (options.warmupSec ?? s.warmupSec ?? 1) * (t.loops ?? 1) };
            await s.measure(r, warm).catch((e: Error) => log(`warm-up ${label(t)} ${s.name}: ${e.message}`));
          }
        for (const s of mine)
          for (const t of running.keys())
            if (supports(t, s)) cells.push({ scenario: s.name, target: t.name, rounds: [] });
        const order = [...running];
        const cellOf = (s: Scenario, t: Target) => cells.find((c) => c.scenario === s.name && c.target === t.name);
        const once = async (round: number, s: Scenario, t: Target, r: Running) => {
          const preroll = (options.prerollSec ?? 1) * (t.loops ?? 1);
          const m = await measureOnce(s, t, r, ctx, measure, preroll).catch((e: Error) => e);
          const where = `round ${round}/${options.rounds} ${s.name} ${t.name}`;
          if (m instanceof Error) {
            log(`${where}: failed: ${m.message}`);
            return undefined;
          }
          cellOf(s, t)?.rounds.push(m);
          log(`${where}: ${m.value.toFixed(2)} ${m.unit}`);
          return m;
        };
        for (let round = 1; round <= options.rounds; round++) {
          for (const s of mine) {
            const pivot = options.paired === true && !s.fresh ? pivotOf(order, s) : undefined;
            for (const [t, r] of rotated(order, round - 1, options.rounds)) {
              if (!supports(t, s) || t === pivot?.[0]) continue;
              if (pivot === undefined) {
                await once(round, s, t, r);
                continue;
              }
              // --paired: the pivot right before each target, and the ratio of the two kept.
              const base = await once(round, s, pivot[0], pivot[1]);
              const m = await once(round, s, t, r);
              const cell = cellOf(s, t);
              if (base === undefined || m === undefined || cell === undefined || !(base.value > 0)) continue;
              cell.pairs ??= { vs: pivot[0].name, ratios: [] };
              cell.pairs.ratios.push(m.value / base.value);
            }
          }
        }
      } finally {
        for (const r of running.values()) await r.stop();
        await backend?.stop();
      }
    }
  } finally {
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
    backend: backends.http1,
    backends,
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
    await writeFile(join(options.outDir, 'chart.svg'), renderChart(rows, titles, caption, BASELINES));
    log(`\nwrote ${join(options.outDir, 'results.json')} and chart.svg`);
  }
  return { rows, skipped, spawned: spawn.spawned, meta };
}

/** `--paired`: the row every other is measured right after (node-pipe; node-h2-proxy for h2). */
function pivotOf(running: readonly [Target, Running][], s: Scenario): [Target, Running] | undefined {
  for (const name of BASELINES.filter((b) => b !== 'direct'))
    for (const entry of running) if (entry[0].name === name && supports(entry[0], s)) return entry;
  return undefined;
}

/**
 * The targets of round `index` (0-based) of `rounds`: the list rotated by an equal share per
 * round, so no target always runs at the same place in a round. Where a target runs can matter
 * on one machine: the targets before it leave the host's loopback sockets in TIME_WAIT (a
 * `newconn` round fills the ephemeral port range), a state that moved the cost of a connection
 * by up to a third, the pipe's as much as the router's (bench/README.md "TIME_WAIT").
 */
export function rotated<T>(list: readonly T[], index: number, rounds: number): T[] {
  if (list.length === 0) return [];
  const by = Math.floor((list.length * index) / Math.max(1, rounds)) % list.length;
  return [...list.slice(by), ...list.slice(0, by)];
}

/** One measurement; a `fresh` scenario gets its own freshly started target. */
async function measureOnce(
  s: Scenario,
  t: Target,
  r: Running,
  ctx: BenchContext,
  options: MeasureOptions,
  prerollSec: number,
): Promise<Metric> {
  const target = s.fresh ? await t.start(ctx) : r;
  try {
    // The same load first, unmeasured: the target has been idle while the others ran.
    if (!s.fresh && prerollSec > 0) await s.measure(target, { ...options, durationSec: prerollSec });
    // The machine's state at the start: loopback sockets in TIME_WAIT, and how far apart the
    // CPUs' speeds are (the slowest one's time for a fixed loop over the fastest one's).
    const timeWait = timeWaitSockets();
    const cpuMs = cpuSpeeds();
    // Then the cores the target and the machine kept busy while it ran (lib/cpu-time.ts).
    const window = cpuWindow(target.pids());
    const m = await s.measure(target, options);
    const use = window();
    const extra: Record<string, number> = { ...m.extra };
    if (timeWait !== undefined) extra.timeWait = timeWait;
    if (cpuMs !== undefined && cpuMs.length > 1) extra.cpuSpread = spread(cpuMs);
    if (use !== undefined && !s.fresh) {
      extra.targetCores = use.targetCores;
      extra.machineCores = use.machineCores;
      // The target's CPU per unit of the metric: µs per request, per connection, per MiB.
      if (m.higherIsBetter && m.value > 0) extra.cpuUs = (use.targetCores * 1e6) / m.value;
    }
    return { ...m, extra };
  } finally {
    if (s.fresh) await target.stop();
  }
}

function list(s: string | undefined): string[] | undefined {
  return s === undefined ? undefined : s.split(',').filter((x) => x !== '');
}

/** The short check CI runs (`--quick`): the rows the rules name, 3 rounds × 2 s, margin 0.5. */
function quickPreset(targets: Targets): Pick<BenchOptions, 'durationSec' | 'rounds' | 'scenarios' | 'targets'> {
  const named = new Set(['direct', 'node-pipe']);
  for (const r of targets.rules) {
    named.add(r.target);
    if (r.vs !== undefined) named.add(r.vs);
  }
  const known = knownTargets();
  return {
    durationSec: 2,
    rounds: 3,
    scenarios: ['keepalive', 'newconn', 'big', 'h2'],
    targets: [...named].filter((n) => known.has(n)),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      preroll: { type: 'string' },
      paired: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      scenarios: { type: 'string' },
      targets: { type: 'string' },
      suite: { type: 'string' },
      idle: { type: 'string', default: '4000' },
      loadgen: { type: 'string' },
      backend: { type: 'string' },
      out: { type: 'string' },
      profile: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
      strict: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      margin: { type: 'string' },
      'targets-file': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(benchHelp(Object.keys(SUITES)));
    return;
  }
  const loadgen = values.loadgen;
  if (loadgen !== undefined && loadgen !== 'wrk' && loadgen !== 'autocannon')
    throw new Error('bench: --loadgen wrk|autocannon');
  const backend = values.backend;
  if (backend !== undefined && backend !== 'nginx' && backend !== 'node')
    throw new Error('bench: --backend nginx|node');
  if (values.preroll !== undefined && !(Number(values.preroll) >= 0))
    throw new Error(`bench: --preroll ${values.preroll}: seconds, 0 or more`);
  const checking = values.check || values.quick;
  const targets = checking ? loadTargets(values['targets-file'] ?? targetsFile(ROOT)) : undefined;
  const preset = values.quick && targets !== undefined ? quickPreset(targets) : undefined;
  const margin = Number(values.margin ?? (values.quick ? 0.5 : targets?.noise));
  if (checking && !(margin >= 0 && margin < 1)) throw new Error('bench: --margin must be a fraction in [0, 1)');
  const out = values.out ?? (values.quick ? 'none' : join(ROOT, 'bench', 'results'));
  const result = await runBench({
    durationSec: Number(values.duration ?? preset?.durationSec ?? 5),
    rounds: Number(values.rounds ?? preset?.rounds ?? 3),
    idleConnections: Number(values.idle),
    ...(values.warmup === undefined ? {} : { warmupSec: Number(values.warmup) }),
    ...(values.preroll === undefined ? {} : { prerollSec: Number(values.preroll) }),
    paired: values.paired,
    profile: values.profile,
    ...(out === 'none' ? {} : { outDir: resolve(out) }),
    ...(loadgen === undefined ? {} : { loadgen }),
    ...(backend === undefined ? {} : { backend }),
    ...(preset === undefined ? {} : { scenarios: preset.scenarios, targets: preset.targets }),
    ...(values.scenarios === undefined ? {} : { scenarios: list(values.scenarios) as string[] }),
    ...(values.targets === undefined ? {} : { targets: list(values.targets) as string[] }),
    ...(values.suite === undefined ? {} : { suite: values.suite }),
  });
  if (targets === undefined) return;
  const verdicts = check(result.rows, targets, margin);
  console.log(`\ncheck against ${values['targets-file'] ?? 'bench/targets.json'} (tolerance ${margin}):`);
  console.log(formatVerdicts(verdicts));
  if (failed(verdicts, values.strict)) {
    console.error(
      values.strict ? 'bench: a goal was missed or a row regressed' : 'bench: a row regressed past its guard',
    );
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(ROOT, 'bench', 'run.ts')) {
  main().catch((e: unknown) => {
    console.error((e as Error).message);
    process.exit(1);
  });
}
