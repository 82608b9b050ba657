/**
 * How fast each CPU runs right now: the milliseconds one fixed loop takes on it, the calling
 * thread moved onto each CPU in turn (`taskset`) and back. On a machine whose CPUs
 * are equal the numbers are equal; on the bench machine one vCPU at times takes twice as long
 * as the other for the same loop, with nothing else running (bench/README.md "Two vCPUs, two
 * speeds"). `run.ts` records how far apart they are at the start of every measurement
 * (`cpuSpread` in each row's extras), beside the TIME_WAIT count.
 */
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { allowedCpus, canPin, cpuNumbers } from './pin.ts';

/** Iterations of the loop: about 10 ms on one of the bench machine's vCPUs at full speed. */
const LOOP = 2_000_000;

/** Integer work with no memory traffic; the result goes to `sink` so the loop is not removed. */
function spin(n: number): number {
  let x = 0;
  for (let i = 0; i < n; i++) x = (Math.imul(x, 31) + i) | 0;
  return x;
}

/** Where each loop's result is stored: a write the compiler must keep. */
const sink = new Int32Array(1);
let warmed = false;

/**
 * Wall milliseconds of the loop, the shorter of two runs (a preemption lengthens one). Wall time,
 * not `process.threadCpuUsage()`: getrusage reports a running thread's CPU time in scheduler-tick
 * steps (4 ms here, so a 10 ms loop read 8 or 12, or 0); and a guest that sees no steal time
 * counts a slowed vCPU's time as CPU time anyway.
 */
function timed(): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 2; i++) {
    const start = performance.now();
    sink[0] = (sink[0] ?? 0) ^ spin(LOOP);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

/** The calling thread's id (the main thread's is the pid; a worker thread has its own). */
function threadId(): string {
  return readlinkSync('/proc/thread-self').split('/').pop()!;
}

function moveTo(tid: string, cpus: string): void {
  execFileSync('taskset', ['--pid', '--cpu-list', cpus, tid], { stdio: 'ignore' });
}

/**
 * Milliseconds the loop took on each CPU this thread may use (index = position in that list:
 * CPU number on a machine with nothing pinned), or undefined where the thread cannot be moved
 * (not Linux, one CPU, no `taskset`, or a move refused).
 */
export function cpuSpeeds(): number[] | undefined {
  if (!canPin()) return undefined;
  const tid = threadId();
  const home = allowedCpus(`self/task/${tid}`);
  if (home === undefined) return undefined;
  if (!warmed) {
    // The first runs tier the loop up to optimised code; only optimised runs are compared.
    for (let i = 0; i < 3; i++) timed();
    warmed = true;
  }
  const out: number[] = [];
  try {
    for (const cpu of cpuNumbers(home)) {
      moveTo(tid, String(cpu));
      out.push(Math.round(timed() * 10) / 10);
    }
  } catch {
    return undefined;
  } finally {
    try {
      moveTo(tid, home);
    } catch {}
  }
  return out;
}

/** The slowest CPU's time over the fastest one's, two decimals: 1 when they run alike. */
export function spread(ms: readonly number[]): number {
  const fastest = Math.min(...ms);
  return fastest > 0 ? Math.round((Math.max(...ms) / fastest) * 100) / 100 : 1;
}
