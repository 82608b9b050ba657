/**
 * CPU time read from /proc (Linux), for the bench's tools: a target's own on-CPU time, and the
 * whole machine's busy time.
 *
 * - `treeCpuNs`: the nanoseconds a set of processes spent on a CPU, every thread (event loop,
 *   GC helpers, libuv pool) and every descendant (nginx's and HAProxy's workers), from
 *   `/proc/PID/task/TID/schedstat`. A process that is gone counts 0.
 * - `cpuWindow`: over one measurement, how many cores the target kept busy and how many the
 *   machine did (`run.ts` records both in each row's extras). A single event loop that is the
 *   bottleneck reads about 1 (a little more with its GC helper threads); a row whose target
 *   reads well under 1 while the machine reads its CPU count is limited by the load
 *   generator and the backend sharing the machine, not by the target.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function tasks(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
}

function processTreeNs(pid: number): number {
  let total = 0;
  for (const t of tasks(pid)) total += Number(read(`/proc/${pid}/task/${t}/schedstat`).split(' ')[0]) || 0;
  for (const k of read(`/proc/${pid}/task/${pid}/children`).split(' '))
    if (k.trim() !== '') total += processTreeNs(Number(k));
  return total;
}

/** On-CPU nanoseconds of `pids` and their descendants, every thread; 0 off Linux. */
export function treeCpuNs(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) total += processTreeNs(pid);
  return total;
}

/** The machine's CPU time so far in clock ticks, all and idle (/proc/stat); undefined off Linux. */
function machineTicks(): { total: number; idle: number } | undefined {
  const line = read('/proc/stat').split('\n')[0] ?? '';
  if (!line.startsWith('cpu ')) return undefined;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user and nice)
  const total = v.slice(0, 8).reduce((a, b) => a + (b || 0), 0);
  return { total, idle: (v[3] ?? 0) + (v[4] ?? 0) };
}

/** Cores kept busy over a window: the target's (`targetCores`) and the whole machine's. */
export interface CpuUse {
  readonly targetCores: number;
  readonly machineCores: number;
}

/** Starts a window over `pids`; the returned function ends it (undefined off Linux). */
export function cpuWindow(pids: readonly number[]): () => CpuUse | undefined {
  const started = performance.now();
  const ns = treeCpuNs(pids);
  const ticks = machineTicks();
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const after = machineTicks();
    if (ticks === undefined || after === undefined || !(seconds > 0)) return undefined;
    const all = after.total - ticks.total;
    const busy = all - (after.idle - ticks.idle);
    return {
      targetCores: (treeCpuNs(pids) - ns) / 1e9 / seconds,
      machineCores: all > 0 ? (busy / all) * cpus().length : 0,
    };
  };
}
