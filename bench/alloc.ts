/**
 * Bytes allocated on the V8 heap per keep-alive request (or per new connection), and scavenges per
 * 10,000 requests, of the Node targets (issue 18: allocation per request, which CPU-per-request
 * runs cannot resolve on a shared machine): `node bench/alloc.ts [--total 40000] [--rounds 3]
 * [--mode keepalive|newconn] [--targets node-pipe,switchboard-per-request]`
 * (`SWB_BENCH_BASELINE=/path` adds `switchboard-per-request@baseline`).
 *
 * 1. Every target runs with `--trace-gc-nvp` and a 1 MiB semi-space, its output into a file of
 *    the scratch folder. Besides the bytes allocated, the scavenges' `promoted=` is summed: what
 *    survived into the old generation (bench/README "Promotion": what a dead object that a
 *    long-lived table still points at costs).
 * 2. After a warm-up, each round sends TOTAL keep-alive requests (lib/fixed-client.ts, 64
 *    connections; `--mode newconn`: TOTAL connections of one request, 32 at a time) to one
 *    target at a time and sums the `allocated=` of the GC lines written
 *    meanwhile; bytes per request are that sum / TOTAL (the bytes allocated after the last GC of
 *    the round are counted by the next one, so rounds differ by at most one new space / TOTAL).
 * 3. Unlike CPU time, this count does not move with the machine's load: a change of a few
 *    dozen bytes per request shows.
 */
import { execFile, spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HTTP1_GROUP } from './lib/groups.ts';
import { createSpawner } from './lib/proc.ts';
import { TARGETS } from './lib/targets.ts';
import type { BenchContext, ChildHandle, Running, Spawner } from './lib/types.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    total: { type: 'string', default: '40000' },
    targets: { type: 'string', default: 'node-pipe,switchboard-per-request' },
    mode: { type: 'string', default: 'keepalive' },
  },
});

const mode = values.mode;
if (mode !== 'keepalive' && mode !== 'newconn') throw new Error(`alloc: --mode is keepalive or newconn, not ${mode}`);
/** Connections of the fixed client: 64 keep-alive ones, or 32 at a time for new connections (the bench's newconn). */
const CONNS = mode === 'keepalive' ? 64 : 32;

function runClient(port: number, conns: number, total: number): Promise<void> {
  const script = join(import.meta.dirname, 'lib', 'fixed-client.ts');
  return new Promise((ok, fail) =>
    execFile(process.execPath, [script, String(port), mode, String(conns), String(total)], (err) =>
      err ? fail(err) : ok(),
    ),
  );
}

/** Sums `allocated=` and the scavenges' `promoted=`, and counts scavenges (gc=s) in `text`. */
function gcTotals(text: string): { bytes: number; promoted: number; scavenges: number; pauseMs: number } {
  let bytes = 0;
  let promoted = 0;
  let scavenges = 0;
  let pauseMs = 0;
  for (const line of text.split('\n')) {
    const a = / allocated=(\d+)/.exec(line);
    if (a === null) continue;
    bytes += Number(a[1]);
    if (/ gc=s /.test(line)) {
      scavenges++;
      promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
    }
    pauseMs += Number(/ pause=([\d.]+)/.exec(line)?.[1] ?? 0);
  }
  return { bytes, promoted, scavenges, pauseMs };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'swb-alloc-'));
  const base = createSpawner();
  const logs = new Map<number, string>();
  // Node targets write their GC trace to a file each (the bench spawner keeps only 1 MiB).
  const spawner: Spawner = {
    ...base,
    start(command, args, options = {}) {
      if (command !== process.execPath) return base.start(command, args, options);
      const file = join(dir, `gc-${logs.size}.log`);
      const fd = openSync(file, 'w');
      const child = spawn(command, [...args], { cwd: options.cwd, stdio: ['ignore', fd, fd] });
      if (child.pid === undefined) throw new Error(`alloc: cannot start ${command}`);
      logs.set(child.pid, file);
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      return {
        pid: child.pid,
        stdout: () => readFileSync(file, 'utf8'),
        stderr: () => '',
        exited,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGKILL');
          await exited;
        },
      } satisfies ChildHandle;
    },
  };
  try {
    const backend = await HTTP1_GROUP.startBackend(dir, base);
    const ctx: BenchContext = {
      backendPort: backend.port,
      backendPids: backend.pids(),
      dir,
      // A 1 MiB young generation: a scavenge every few hundred requests, so the bytes after the
      // last one of a round (counted in the next) are a small part of the round's.
      nodeFlags: ['--trace-gc-nvp', '--max-semi-space-size=1'],
      spawn: spawner,
    };
    const wanted = values.targets.split(',');
    if (process.env.SWB_BENCH_BASELINE) wanted.push('switchboard-per-request@baseline');
    const running = new Map<string, Running>();
    for (const t of TARGETS.filter((x) => wanted.includes(x.name))) running.set(t.name, await t.start(ctx));
    for (const [, r] of running) await runClient(r.port, CONNS, 5000);
    const total = Number(values.total);
    console.log('target\tround\tB/request\tpromoted B/request\tpromoted %\tscavenges/10k\tGC pause µs/request');
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const [name, r] of running) {
        const file = logs.get(r.pids()[0]!)!;
        const before = readFileSync(file, 'utf8').length;
        await runClient(r.port, CONNS, total);
        const g = gcTotals(readFileSync(file, 'utf8').slice(before));
        console.log(
          `${name}\t${round}\t${(g.bytes / total).toFixed(0)}\t${(g.promoted / total).toFixed(0)}\t${((100 * g.promoted) / Math.max(1, g.bytes)).toFixed(1)}\t${((g.scavenges * 10000) / total).toFixed(1)}\t${((g.pauseMs * 1000) / total).toFixed(2)}`,
        );
      }
    }
    for (const [, r] of running) await r.stop();
    await backend.stop();
  } finally {
    await base.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
