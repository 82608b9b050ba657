/**
 * A server process for tests (etcd.ts, redis.ts): started from `bin` and `args`, ready once
 * `answers()` holds (its exit before that fails the start with the last 4,000 characters of its
 * output), killed by `stop()` (SIGKILL, keeping its files), started again by `restart()` with the
 * same arguments (so the same ports: clients reconnect).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { eventually } from './router.ts';

export interface ServerProcess {
  /** Kills the process (SIGKILL) and waits for its exit; nothing when it is not running. */
  stop(): Promise<void>;
  /** Starts it again with the same arguments; resolves when it answers. */
  restart(): Promise<void>;
}

/** Starts `bin args` and resolves once `answers()` holds (within 20 s); `name` is for errors. */
export async function startServerProcess(
  name: string,
  bin: string,
  args: readonly string[],
  answers: () => Promise<boolean>,
): Promise<ServerProcess> {
  let child: ChildProcess | undefined;
  const run = async () => {
    const c = spawn(bin, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
    };
    c.stdout?.on('data', keep);
    c.stderr?.on('data', keep);
    child = c;
    await eventually(
      async () => {
        if (c.exitCode !== null) throw new Error(`${name} exited ${c.exitCode}: ${output}`);
        return answers();
      },
      20_000,
      `${name} to answer`,
    );
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (c === undefined || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await run();
  return { stop, restart: run };
}
