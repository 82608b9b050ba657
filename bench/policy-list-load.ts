/**
 * A 1,000,000-entry `block` list loaded while the router serves traffic (issue 42 item 7): how
 * long the load takes, and whether it stalls live requests.
 *
 * 1. The bench backend (nginx, else node: lib/backend.ts) and the router as its own process
 *    (`bin/switchboard.js start`, `net` panel, per-request routing, access log off) with one rule,
 *    `{ use: block, options: { file: deny.txt } }`, whose file holds `--entries` random IPv4
 *    /24s and /32s (lib/policies-target.ts) and not 127.0.0.2.
 * 2. `wrk -t1 -c32` (autocannon without wrk) keep-alive requests for `--duration` seconds, three times: `before`, `during`
 *    (the list file replaced back to back, by rename, alternately with a list of as many other
 *    entries plus 127.0.0.2 and the first one again; each next replacement once the last is
 *    live), `after`.
 * 3. A replacement is live when a probe connection from 127.0.0.2 is closed at accept (listed)
 *    or answered (not listed); probes run every 20 ms. The time from the rename to live includes
 *    the file watch's stat polling (250 ms) and its 50 ms debounce: what an operator sees.
 * 4. Printed: each phase's req/s, p50 and p99; each load's write → live time. `--check` exits 1
 *    when the slowest load is past `policyListLoad.loadMsMax` or p99 during over before past
 *    `policyListLoad.p99DuringOverBeforeMax` (bench/targets.json), by more than the margin
 *    (default: the file's noise).
 *
 *   node bench/policy-list-load.ts [--duration 5] [--entries 1000000] [--check [--margin M]]
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { tempDir } from '../test/harness/router.ts';
import { startBackend } from './lib/backend.ts';
import { judgeGuard, loadTargets, targetsFile } from './lib/check.ts';
import { defaultLoadgen, type LoadResult, runLoad } from './lib/loadgen.ts';
import { switchboardConf, switchboardServers } from './lib/peers.ts';
import { randomCidrLines } from './lib/policies-target.ts';
import { createSpawner } from './lib/proc.ts';
import { SMALL_PATH } from './lib/scenarios-shared.ts';
import { ROOT, startSwitchboard } from './lib/targets.ts';
import type { BenchContext } from './lib/types.ts';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    entries: { type: 'string', default: '1000000' },
    check: { type: 'boolean', default: false },
    margin: { type: 'string' },
  },
});
const DURATION = Number(flags.duration);
const ENTRIES = Number(flags.entries);
const PROBE = '127.0.0.2';

/** Whether a connection from `from` is served (a response byte) or closed before any. */
function probe(port: number, from: string): Promise<'served' | 'closed'> {
  return new Promise((done) => {
    const s = connect({ port, host: '127.0.0.1', localAddress: from });
    let got = false;
    s.on('data', () => {
      got = true;
      s.destroy();
    });
    s.on('error', () => {});
    s.on('close', () => done(got ? 'served' : 'closed'));
    s.write(`GET ${SMALL_PATH} HTTP/1.1\r\nHost: probe.test\r\nConnection: close\r\n\r\n`);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const spawn = createSpawner();
const dir = await tempDir();

async function main(): Promise<boolean> {
  const backend = await startBackend(dir, spawn);
  const ctx: BenchContext = { backendPort: backend.port, backendPids: backend.pids(), dir, nodeFlags: [], spawn };
  const list = join(dir, 'deny.txt');
  const without = randomCidrLines(ENTRIES, 2);
  const withProbe = randomCidrLines(ENTRIES, 3, [PROBE]);
  await writeFile(list, without);
  const t0 = performance.now();
  const router = await startSwitchboard(
    ctx,
    'policy-list-load',
    (p) =>
      `${switchboardConf(p, 'per-request')}policies:\n  - { name: deny-list, use: block, options: { file: ${JSON.stringify(list)} } }\n`,
    switchboardServers(backend.port),
  );
  const startMs = performance.now() - t0;
  const url = `http://127.0.0.1:${router.port}${SMALL_PATH}`;
  const load = (durationSec: number) =>
    runLoad({ url, connections: 32, durationSec, close: false }, defaultLoadgen(), spawn);
  if ((await probe(router.port, PROBE)) !== 'served') throw new Error('bench: the probe address is listed at start');
  await load(DURATION); // warm-up
  const before = await load(DURATION);
  const times: number[] = [];
  let stop = false;
  const replacing = (async () => {
    let listed = false;
    let n = 0;
    while (!stop) {
      listed = !listed;
      const next = join(dir, `deny-${++n}.txt`);
      await writeFile(next, listed ? withProbe : without);
      const written = performance.now();
      await rename(next, list);
      const want = listed ? 'closed' : 'served';
      while (!stop && (await probe(router.port, PROBE)) !== want) await sleep(20);
      if (!stop) times.push(performance.now() - written);
    }
  })();
  const during = await load(DURATION);
  stop = true;
  await replacing;
  await sleep(1000);
  const after = await load(DURATION);
  report(startMs, { before, during, after }, times);
  return flags.check ? checkLoad(before, during, times) : true;
}

function report(startMs: number, phases: Record<string, LoadResult>, times: readonly number[]): void {
  const f = (n: number) => n.toFixed(1).padStart(7);
  console.log(`\n${ENTRIES.toLocaleString('en-US')}-entry block list, wrk -t1 -c32 keep-alive ${DURATION}s per phase`);
  console.log(`router start with the list (process start to listening): ${startMs.toFixed(0)} ms`);
  console.log('phase      req/s     p50 ms  p99 ms  errors');
  for (const [name, p] of Object.entries(phases))
    console.log(`${name.padEnd(8)} ${p.rps.toFixed(0).padStart(7)} ${f(p.p50Ms)} ${f(p.p99Ms)}  ${p.errors}`);
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `list loads live during 'during': ${times.length}; write → live (incl. 250 ms stat polling): ` +
      `${times.map((t) => t.toFixed(0)).join(', ')} ms; median ${(sorted[sorted.length >> 1] ?? 0).toFixed(0)}, max ${(sorted.at(-1) ?? 0).toFixed(0)}`,
  );
}

/** `--check`: the slowest load and p99 during over before, against bench/targets.json. */
function checkLoad(before: LoadResult, during: LoadResult, times: readonly number[]): boolean {
  const targets = loadTargets(targetsFile(ROOT));
  const limits = targets.policyListLoad;
  if (limits === undefined) return true;
  const margin = Number(flags.margin ?? targets.noise);
  const slowest = Math.max(...times);
  const ratio = during.p99Ms / before.p99Ms;
  const judge = (what: string, value: number, max: number) =>
    judgeGuard(value, { scenario: 'policy-list-load', target: what, vs: 'before', max, guard: max }, margin);
  const load = times.length === 0 ? 'regressed' : judge('load', slowest, limits.loadMsMax);
  const p99 = judge('p99', ratio, limits.p99DuringOverBeforeMax);
  console.log(`check: slowest load ${slowest.toFixed(0)} ms (< ${limits.loadMsMax}): ${load}`);
  console.log(`check: p99 during / before = ${ratio.toFixed(2)} (≤ ${limits.p99DuringOverBeforeMax}): ${p99}`);
  return load !== 'regressed' && p99 !== 'regressed';
}

try {
  if (!(await main())) process.exitCode = 1;
} finally {
  await spawn.stopAll();
  await rm(dir, { recursive: true, force: true });
}
