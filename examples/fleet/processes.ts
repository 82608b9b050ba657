/**
 * The example's child processes and the state file that lets `--stop` find them.
 *
 * 1. `spawnLogged` starts a program in its own process group (Ctrl-C reaches run.ts only, which
 *    then stops the parts in order), its stdout and stderr appended to `<dir>/<name>.log`.
 * 2. `waitUntil` polls a probe until it holds, failing early when the process exits; a part that
 *    does not come up in time is killed before the failure is thrown.
 * 3. `<dir>/state.json` lists run.ts's pid, every child's pid and the ports; `--stop` reads it.
 * 4. `stopPid` sends a signal to one pid and waits for it to be gone (SIGKILL after a deadline).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SwitchboardError } from '../../src/base/errors.ts';
import type { Ports } from './ports.ts';

/** One started part of the example. */
export interface Part {
  readonly name: string;
  readonly child: ChildProcess;
  /** The signal that stops it gracefully. */
  readonly signal: NodeJS.Signals;
}

/** What `--stop` and the test read. */
export interface State {
  readonly supervisor: number;
  readonly ready: boolean;
  readonly parts: readonly { readonly name: string; readonly pid: number }[];
  readonly ports: Ports;
}

/** Starts `bin args` in `dir` (own process group), output appended to `<dir>/<name>.log`. */
export function spawnLogged(
  dir: string,
  name: string,
  bin: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; signal?: NodeJS.Signals } = {},
): Part {
  const log = openSync(join(dir, `${name}.log`), 'a');
  try {
    const child = spawn(bin, [...args], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...process.env, ...options.env },
    });
    child.on('error', () => {}); // a missing binary shows as an exit in waitUntil
    return { name, child, signal: options.signal ?? 'SIGTERM' };
  } finally {
    closeSync(log);
  }
}

/** Polls `probe` every 100 ms until it holds; fails when `part` exits, or after `ms` (killing `part`). */
export async function waitUntil(part: Part | undefined, what: string, probe: () => Promise<boolean>, ms = 30_000) {
  const until = Date.now() + ms;
  for (;;) {
    if (part !== undefined && (part.child.exitCode !== null || part.child.signalCode !== null))
      throw new SwitchboardError('SWB_ERR_FLEET', `${part.name} exited before ${what} (see ${part.name}.log)`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > until) {
      // A part that did not come up is not in the run's list yet: stop it here (its process group).
      if (part?.child.pid !== undefined) killGroup(part.child.pid);
      throw new SwitchboardError('SWB_ERR_FLEET', `${what}: not within ${ms / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** SIGKILL to the process group `pid` leads (spawnLogged's parts are detached: each leads one). */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** True while `pid` runs (a zombie, exited but not yet reaped by its parent, counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S …"; the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: what kill said
  }
}

/** Sends `signal` to `pid` and waits until it is gone; SIGKILL after `ms`. */
export async function stopPid(pid: number, signal: NodeJS.Signals, ms = 5000): Promise<void> {
  if (!alive(pid)) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const until = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > until) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stateFile = (dir: string) => join(dir, 'state.json');

export async function writeState(dir: string, state: State): Promise<void> {
  await writeFile(stateFile(dir), `${JSON.stringify(state, null, 2)}\n`);
}

/** The state of a run in `dir`, or undefined when none is recorded. */
export async function readState(dir: string): Promise<State | undefined> {
  try {
    return JSON.parse(await readFile(stateFile(dir), 'utf8')) as State;
  } catch {
    return undefined;
  }
}

export async function removeState(dir: string): Promise<void> {
  await rm(stateFile(dir), { force: true });
}
