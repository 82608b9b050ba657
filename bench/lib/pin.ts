/**
 * CPU placement for the bench (Linux, `taskset` from util-linux): which CPUs a process and every
 * thread of it may run on. The bench machine's two vCPUs run at different speeds that move from
 * second to second (bench/README.md "Two vCPUs, two speeds"), so a target compared with another
 * must run where the other ran, at the same moments: `cost.ts --pin` puts every target on one
 * CPU and the client and backend on the others.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { which } from './proc.ts';

/** Whether processes can be pinned here (`taskset` installed, more than one CPU to use). */
export function canPin(): boolean {
  return process.platform === 'linux' && availableParallelism() > 1 && which('taskset') !== undefined;
}

/** The CPU numbers of a /proc or `taskset -c` list: "0-2,5" is 0, 1, 2, 5. */
export function cpuNumbers(list: string): number[] {
  const out: number[] = [];
  for (const part of list.split(',')) {
    const [from, to = from] = part.split('-').map(Number);
    if (!Number.isInteger(from) || !Number.isInteger(to)) throw new Error(`not a CPU list: ${list}`);
    for (let c = from!; c <= to!; c++) out.push(c);
  }
  return out;
}

/** The CPUs this process may use except `cpu`, as a `taskset -c` list ("0,2,3"). */
export function otherCpus(cpu: number, usable: readonly number[] = cpuNumbers(allowedCpus() ?? '0')): string {
  return usable.filter((c) => c !== cpu).join(',');
}

/** Moves process `pid` and every thread it has to `cpus` (a `taskset -c` list); threads it starts later inherit it. */
export function pinProcess(pid: number, cpus: string): void {
  execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', cpus, String(pid)], { stdio: 'ignore' });
}

/** `command args` as a command line that starts it on `cpus`. */
export function pinnedCommand(cpus: string, command: string, args: readonly string[]): [string, string[]] {
  return ['taskset', ['--cpu-list', cpus, command, ...args]];
}

/** The CPUs process (or `self/task/TID` thread) `pid` may run on, as /proc lists them ("0-1", "1"). */
export function allowedCpus(pid: number | string = 'self'): string | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1];
  } catch {
    return undefined;
  }
}
