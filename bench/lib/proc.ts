/**
 * Child processes, ports and memory for the bench harness.
 *
 * 1. Every process goes through one Spawner, which records its pid; `stopAll` sends SIGTERM,
 *    waits, then SIGKILL, so a failed run never leaves a peer listening.
 * 2. Ports are picked by binding port 0 on loopback and releasing it (peers need a number in
 *    their config); `waitForPort` polls until something accepts there.
 * 3. RSS is summed over a process tree read from /proc (nginx and HAProxy fork workers).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import type { ChildHandle, Spawner } from './types.ts';

const OUTPUT_LIMIT = 1 << 20;
const STOP_GRACE_MS = 3_000;

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether `pid` is still running (a zombie counts as gone). */
export function isRunning(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = exitOf(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** A Spawner that records every pid and can stop everything it started. */
export function createSpawner(): Spawner {
  const spawned: number[] = [];
  const live = new Set<ChildProcess>();
  return {
    spawned,
    start(command, args, options = {}) {
      const child = spawn(command, [...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      if (child.pid === undefined) throw new Error(`bench: cannot start ${command}`);
      spawned.push(child.pid);
      live.add(child);
      let out = '';
      let err = '';
      child.stdout?.on('data', (c: Buffer) => {
        if (out.length < OUTPUT_LIMIT) out += c.toString();
      });
      child.stderr?.on('data', (c: Buffer) => {
        if (err.length < OUTPUT_LIMIT) err += c.toString();
      });
      const exited = exitOf(child);
      exited.then(() => live.delete(child));
      return {
        pid: child.pid,
        stdout: () => out,
        stderr: () => err,
        exited,
        stop: () => stopChild(child),
      } satisfies ChildHandle;
    },
    async stopAll() {
      await Promise.all([...live].map(stopChild));
    },
  };
}

/** A loopback port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (address === null || typeof address !== 'object') throw new Error('bench: no port');
  return address.port;
}

function tryConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Polls until 127.0.0.1:port accepts, or fails with what the child printed. */
export async function waitForPort(port: number, child: ChildHandle, what: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let exited = false;
  child.exited.then(() => {
    exited = true;
  });
  while (!(await tryConnect(port))) {
    if (exited || Date.now() > until) {
      throw new Error(`bench: ${what} did not listen on ${port}: ${child.stderr().slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The absolute path of `name` on PATH (or the usual sbin folders), or undefined. */
export function which(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}

function childrenOf(): Map<number, number[]> {
  const kids = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = kids.get(ppid) ?? [];
      list.push(pid);
      kids.set(ppid, list);
    } catch {}
  }
  return kids;
}

function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

/** Resident memory in KiB summed over `roots` and all their descendants. */
export function treeRssKiB(roots: readonly number[]): number {
  const kids = childrenOf();
  let total = 0;
  const stack = [...roots];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    total += rssKiB(pid);
    stack.push(...(kids.get(pid) ?? []));
  }
  return total;
}
