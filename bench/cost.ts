/**
 * CPU per request and memory per held connection of the HTTP/1 targets, counted rather than
 * timed (issue 18 item 1): `node bench/cost.ts [--rounds 5] [--total 20000] [--scenarios
 * keepalive,newconn,big,idle] [--targets node-pipe,switchboard-net,switchboard-per-request]
 * [--warm N] [--paired] [--pin CPU] [--versus NAME] [--profile DIR] [--node-flags='--heap-prof --heap-prof-dir=DIR']`: `--node-flags` go to every
 * Node target (the routers, node-pipe), e.g. the sampling heap profiler or `--trace-gc`.
 *
 * 1. The nginx (or Node) backend and each target run as their own processes; the fixed-count
 *    client (lib/fixed-client.ts) is a third process, so only the target's own work is counted.
 *    Before the rounds every target is warmed: 5,000 keep-alive requests, and `--warm N`
 *    (15,000) new connections when `newconn` is measured.
 * 2. Per measurement, the target's on-CPU time (every thread and every worker process,
 *    lib/cpu-time.ts) is read before and after TOTAL requests; CPU µs per request is the delta /
 *    TOTAL. Throughput on a shared machine moves with everyone else's load; CPU time per request
 *    moves far less.
 * 3. Rounds interleave the targets (A B C A B C…); the table shows the minimum and the median
 *    over rounds, and the ratio of the medians to `node-pipe`'s.
 * 4. `idle` is the bench's own scenario (lib/idle.ts): RSS growth per held connection.
 * 5. `SWB_BENCH_BASELINE=/path/to/a/checkout` adds that tree's two router rows (`@baseline`).
 * 6. `--paired`: one client process loads every target at the same time (each with CONNS /
 *    targets connections, at least 8), so the machine's load at that moment hits all of them
 *    alike; the last column is then the median over rounds of each round's ratio to
 *    `node-pipe`, which moves far less on a shared machine than the ratio of the medians.
 *    `--versus NAME` takes the ratios to another target instead (e.g.
 *    `switchboard-per-request@baseline`: this tree against the baseline, round by round).
 *    The ratio column lists every round's ratio after the median.
 * 7. `--pin CPU` (Linux, taskset): every target, all its threads, runs on CPU; the backend and
 *    the client run on the other CPUs. With `--paired` the targets then share one CPU at the
 *    same moments, so a CPU that slows down (the bench machine's vCPUs do, bench/README.md "Two
 *    vCPUs, two speeds") slows all of them alike: the per-round ratios stay within ±3%.
 */

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { treeCpuNs } from './lib/cpu-time.ts';
import { HTTP1_GROUP } from './lib/groups.ts';
import { measureIdle } from './lib/idle.ts';
import { allowedCpus, canPin, cpuNumbers, otherCpus, pinnedCommand, pinProcess } from './lib/pin.ts';
import { createSpawner } from './lib/proc.ts';
import type { BenchContext, Running, Target } from './lib/types.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    total: { type: 'string', default: '20000' },
    warm: { type: 'string', default: '15000' },
    scenarios: { type: 'string', default: 'keepalive,newconn,big' },
    targets: { type: 'string', default: 'node-pipe,switchboard-net,switchboard-per-request' },
    idle: { type: 'string', default: '2000' },
    profile: { type: 'string' },
    paired: { type: 'boolean', default: false },
    'node-flags': { type: 'string', default: '' },
    versus: { type: 'string', default: 'node-pipe' },
    pin: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  // The header comment of this file is the usage.
  const head = readFileSync(new URL(import.meta.url), 'utf8').split('*/')[0] ?? '';
  const usage = head.replace(/^\/\*\*\n?/, '').replace(/^ ?\* ?/gm, '');
  console.log(usage.trimEnd());
  process.exit(0);
}

const SCENARIOS: Record<string, { conns: number; total: (t: number) => number }> = {
  keepalive: { conns: 64, total: (t) => t },
  newconn: { conns: 32, total: (t) => Math.ceil(t / 4) },
  big: { conns: 8, total: (t) => Math.ceil(t / 100) },
};

/** `--pin CPU`: every target (all its threads) on CPU, the backend and the client on the others. */
const pin = values.pin === undefined ? undefined : Number(values.pin);
const usableCpus = () => cpuNumbers(allowedCpus() ?? '0');

function runClient(port: number | string, mode: string, conns: number, total: number): Promise<number> {
  const script = join(import.meta.dirname, 'lib', 'fixed-client.ts');
  const argv = [script, String(port), mode, String(conns), String(total)];
  const [cmd, args] =
    pin === undefined ? [process.execPath, argv] : pinnedCommand(otherCpus(pin), process.execPath, argv);
  return new Promise((ok, fail) => execFile(cmd, args, (err, out) => (err ? fail(err) : ok(Number(out.trim())))));
}

/** One round of `--paired`: every target loaded at once by one client; CPU per request each. */
async function pairedRound(
  running: Map<string, Running>,
  s: string,
  conns: number,
  n: number,
  rows: Map<string, number[]>,
  ratios: Map<string, number[]>,
): Promise<void> {
  const all = [...running];
  const before = all.map(([, r]) => treeCpuNs(r.pids()));
  const each = Math.max(8, Math.ceil(conns / all.length));
  await runClient(all.map(([, r]) => r.port).join(','), s, each, n);
  const us = all.map(([, r], i) => (treeCpuNs(r.pids()) - before[i]!) / 1000 / n);
  const pipe = all.findIndex(([name]) => name === values.versus);
  for (const [i, [name]] of all.entries()) {
    const key = `${s}\t${name}`;
    rows.set(key, [...(rows.get(key) ?? []), us[i]!]);
    if (pipe !== -1) ratios.set(key, [...(ratios.get(key) ?? []), us[i]! / us[pipe]!]);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  if (pin !== undefined && !(canPin() && usableCpus().includes(pin)))
    throw new Error(`cost: --pin ${values.pin}: needs taskset, two CPUs or more, and one of ${usableCpus().join(',')}`);
  const dir = await mkdtemp(join(tmpdir(), 'swb-cost-'));
  const spawn = createSpawner();
  try {
    const backend = await HTTP1_GROUP.startBackend(dir, spawn);
    const ctx: BenchContext = {
      backendPort: backend.port,
      backendPids: backend.pids(),
      dir,
      nodeFlags: [
        ...(values.profile === undefined
          ? []
          : ['--cpu-prof', '--cpu-prof-interval', '100', `--cpu-prof-dir=${resolve(values.profile)}`]),
        ...values['node-flags'].split(' ').filter((f) => f !== ''),
      ],
      spawn,
    };
    // lib/targets.ts adds the `@baseline` rows itself when SWB_BENCH_BASELINE is set; the group
    // adds the policy row (switchboard-per-request-policies).
    const all: readonly Target[] = HTTP1_GROUP.targets;
    const wanted = values.targets.split(',');
    if (process.env.SWB_BENCH_BASELINE) wanted.push('switchboard-net@baseline', 'switchboard-per-request@baseline');
    const targets = all.filter((t) => wanted.includes(t.name));
    const running = new Map<string, Running>();
    for (const t of targets) running.set(t.name, await t.start(ctx));
    if (pin !== undefined) {
      for (const pid of backend.pids()) pinProcess(pid, otherCpus(pin));
      for (const [, r] of running) for (const pid of r.pids()) pinProcess(pid, String(pin));
    }
    const scenarios = values.scenarios.split(',');
    const total = Number(values.total);
    const rows = new Map<string, number[]>();
    // Warm every target (JIT, pools) on every scenario it is measured on: a Node target's
    // accept → connect → close path reaches optimised code only after ~10,000 connections
    // (bench/README.md "Warm-up").
    for (const [, r] of running) {
      await runClient(r.port, 'keepalive', 64, 5000);
      if (scenarios.includes('newconn')) await runClient(r.port, 'newconn', 32, Number(values.warm));
    }
    const ratios = new Map<string, number[]>();
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const s of scenarios) {
        if (s === 'idle') continue;
        const sc = SCENARIOS[s]!;
        const n = sc.total(total);
        if (values.paired) {
          await pairedRound(running, s, sc.conns, n, rows, ratios);
          continue;
        }
        for (const [name, r] of running) {
          const before = treeCpuNs(r.pids());
          await runClient(r.port, s, sc.conns, n);
          const us = (treeCpuNs(r.pids()) - before) / 1000 / n;
          const key = `${s}\t${name}`;
          rows.set(key, [...(rows.get(key) ?? []), us]);
        }
      }
    }
    const versus = values.versus;
    const last = values.paired ? `×${versus} (median of rounds)` : `×${versus} (median)`;
    console.log(`scenario\ttarget\tmin µs/req\tmedian µs/req\t${last}`);
    for (const [key, xs] of rows) {
      const [s] = key.split('\t');
      const pipe = rows.get(`${s}\t${versus}`);
      const paired = ratios.get(key);
      const ratio =
        paired !== undefined
          ? `${median(paired).toFixed(2)} (${paired.map((r) => r.toFixed(2)).join(' ')})`
          : pipe === undefined
            ? ''
            : (median(xs) / median(pipe)).toFixed(2);
      console.log(`${key}\t${Math.min(...xs).toFixed(2)}\t${median(xs).toFixed(2)}\t${ratio}`);
    }
    if (scenarios.includes('idle')) {
      for (const t of targets) {
        // A fresh process per target, like the bench's idle scenario.
        await running.get(t.name)!.stop();
        const r = await t.start(ctx);
        running.set(t.name, r);
        const kib = await measureIdle(r.port, () => r.pids(), Number(values.idle));
        console.log(`idle\t${t.name}\t${kib.toFixed(2)} KiB/conn`);
      }
    }
    for (const [, r] of running) await r.stop();
    await backend.stop();
  } finally {
    await spawn.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
