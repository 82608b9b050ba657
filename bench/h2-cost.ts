/**
 * CPU cost per HTTP/2 request of the `h2` group's front ends (issue 18 item 4), measured as the
 * target's own CPU time rather than throughput, so it holds up on a shared machine:
 * `node bench/h2-cost.ts [--requests 20000] [--rounds 3] [--targets node-h2-proxy,switchboard-http2]`.
 *
 * 1. The `h2` group's backend (nginx h2c, else Node) and each named target start as in
 *    `npm run bench` (bench/lib/group-h2.ts); `SWB_BENCH_BASELINE=/path/to/checkout` adds that
 *    tree's http2 panel as `switchboard-http2@baseline` (several, comma-separated: `@baseline2`…).
 * 2. Each round runs `h2load -t1 -c10 -m10 -n N` once per target (A B A B…) and reads the
 *    target's CPU time (every thread of its process tree, /proc/PID/task/TID/schedstat, ns)
 *    before and after: µs of CPU per request, plus req/s and p99 from the same run. Printed:
 *    medians, the lowest CPU and best req/s, and the median of each round's CPU over the last
 *    target's in that round (load that drifts between rounds cancels out).
 * 3. `--profile`: Node targets run with `--cpu-prof`; profiles land in `--out` (default a temp
 *    folder, printed).
 * 4. `--tunings win,hpack,…`: adds `node-h2-proxy+NAME` rows, the floor with settings an operator
 *    could set (lib/h2-tunings.ts), for the floor experiment against nginx h2.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { treeCpuNs } from './lib/cpu-time.ts';
import { H2_GROUP } from './lib/group-h2.ts';
import { tunedFloor } from './lib/h2-tunings.ts';
import { switchboardH2Conf, switchboardH2Servers } from './lib/peers-h2.ts';
import { createSpawner, which } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import { startSwitchboard } from './lib/targets.ts';
import type { BenchContext, Running, Target } from './lib/types.ts';

interface Run {
  readonly rps: number;
  readonly p99Ms: number;
  readonly cpuUsPerReq: number;
}

async function h2load(
  port: number,
  requests: number,
  dir: string,
  spawn = createSpawner(),
): Promise<Run & { out: string }> {
  const log = join(dir, `h2load-${port}.log`);
  const child = spawn.start(which('h2load') as string, [
    '-t1',
    '-c10',
    '-m10',
    `-n${requests}`,
    `--log-file=${log}`,
    `http://127.0.0.1:${port}/small`,
  ]);
  await child.exited;
  const out = child.stdout();
  const rps = Number(/finished in [^,]+, ([\d.]+) req\/s/.exec(out)?.[1] ?? Number.NaN);
  if (!/, (\d+) succeeded/.test(out) || !out.includes(`${requests} 2xx`))
    throw new Error(`h2load did not get ${requests} 2xx answers:\n${out.slice(-600)}`);
  const durations = (await readFile(log, 'utf8'))
    .split('\n')
    .map((l) => Number(l.split('\t')[2]))
    .filter((n) => Number.isFinite(n) && n > 0)
    .sort((a, b) => a - b);
  const p99 = durations[Math.min(durations.length - 1, Math.floor(durations.length * 0.99))] ?? Number.NaN;
  return { rps, p99Ms: p99 / 1000, cpuUsPerReq: 0, out };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '20000' },
      rounds: { type: 'string', default: '3' },
      targets: { type: 'string', default: 'node-h2-proxy,switchboard-http2' },
      tunings: { type: 'string', default: '' },
      profile: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  const requests = Number(values.requests);
  const rounds = Number(values.rounds);
  const dir = await mkdtemp(join(tmpdir(), 'swb-h2-cost-'));
  const out = values.out === undefined ? join(dir, 'profiles') : resolve(values.out);
  const spawn = createSpawner();
  // SWB_BENCH_BASELINE: one checkout (`@baseline`), or several separated by commas
  // (`@baseline`, `@baseline2`, …), each a row of its own.
  const baselines = (process.env.SWB_BENCH_BASELINE ?? '').split(',').filter((x) => x !== '');
  const extra: Target[] = baselines.map((path, i) => {
    const suffix = i === 0 ? '' : String(i + 1);
    return {
      name: `switchboard-http2@baseline${suffix}`,
      available: () => undefined,
      start: (ctx) =>
        startSwitchboard(
          ctx,
          `switchboard-http2-baseline${suffix}`,
          switchboardH2Conf,
          switchboardH2Servers(ctx.backendPort),
          resolve(path),
        ),
    };
  });
  const names = values.targets.split(',');
  for (const t of extra) names.push(t.name);
  const here = join(dirname(fileURLToPath(import.meta.url)), 'lib');
  for (const t of values.tunings.split(',').filter((x) => x !== '')) {
    extra.push(tunedFloor(t, here));
    names.push(`node-h2-proxy+${t}`);
  }
  const all = [...H2_GROUP.targets, ...extra];
  const targets = names.map((n) => {
    const t = all.find((x) => x.name === n);
    if (t === undefined) throw new Error(`unknown target ${n} (known: ${all.map((x) => x.name).join(', ')})`);
    return t;
  });
  const running = new Map<string, Running>();
  const runs = new Map<string, Run[]>(names.map((n) => [n, []]));
  try {
    const backend = await H2_GROUP.startBackend(dir, spawn);
    const ctx: BenchContext = {
      backendPort: backend.port,
      ...(backend.altPort === undefined ? {} : { backendAltPort: backend.altPort }),
      backendPids: backend.pids(),
      dir,
      nodeFlags: values.profile ? ['--cpu-prof', `--cpu-prof-dir=${out}`] : [],
      spawn,
    };
    for (const t of targets) {
      const why = t.available();
      if (why !== undefined) {
        console.log(`skipping ${t.name}: ${why}`);
        continue;
      }
      const r = await t.start(ctx);
      running.set(t.name, r);
      await h2load(r.port, Math.min(5_000, requests), dir); // warm-up
    }
    for (let round = 0; round < rounds; round++) {
      for (const [name, r] of running) {
        const pids = r.pids();
        const before = treeCpuNs(pids);
        const run = await h2load(r.port, requests, dir);
        const after = treeCpuNs(pids);
        runs.get(name)?.push({ ...run, cpuUsPerReq: (after - before) / 1000 / requests });
      }
    }
  } finally {
    for (const r of running.values()) await r.stop();
    await spawn.stopAll();
    if (!values.profile || values.out !== undefined) await rm(dir, { recursive: true, force: true });
  }
  console.log(`h2load -t1 -c10 -m10 -n${requests}, median of ${rounds} rounds (CPU: the target's process tree)`);
  console.log(['target', 'cpu µs/req', '(min)', 'req/s', '(max)', 'p99 ms'].join('\t'));
  for (const [name, rs] of runs) {
    if (rs.length === 0) continue;
    const m = (f: (r: Run) => number) => median(rs.map(f));
    console.log(
      [
        name,
        m((r) => r.cpuUsPerReq).toFixed(1),
        Math.min(...rs.map((r) => r.cpuUsPerReq)).toFixed(1),
        m((r) => r.rps).toFixed(0),
        Math.max(...rs.map((r) => r.rps)).toFixed(0),
        m((r) => r.p99Ms).toFixed(2),
      ].join('\t'),
    );
  }
  // Paired: each round's CPU per request over the last target's in the same round (targets run
  // back to back, so load that drifts between rounds cancels out).
  const last = [...runs.values()].at(-1) ?? [];
  if (runs.size > 1 && last.length > 0) {
    const lastName = [...runs.keys()].at(-1);
    const ratios = [...runs].map(([name, rs]) => {
      const r = rs.map((x, i) => x.cpuUsPerReq / (last[i]?.cpuUsPerReq ?? Number.NaN));
      return `${name} ${median(r).toFixed(3)}`;
    });
    console.log(`cpu per request ÷ ${lastName}, median of per-round ratios: ${ratios.join(', ')}`);
  }
  if (values.profile) console.log(`profiles: ${out}`);
}

await main();
