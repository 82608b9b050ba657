/**
 * A peer (nginx, HAProxy) run in the foreground for interop tests: spawn it, keep its stdout and
 * stderr for failure messages, poll `ready()` until it serves, and `close()` it by its pid and
 * remove its temp dir. Startup failure (the process exits, or the deadline passes) closes it and
 * throws with its output and config.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';

export interface PeerProcess {
  /** stdout + stderr so far (for failure messages). */
  output(): string;
  close(): Promise<void>;
}

export interface PeerSpec {
  readonly name: string;
  readonly bin: string;
  readonly args: readonly string[];
  /** The temp dir holding its config; removed on close. */
  readonly dir: string;
  /** The config text, quoted in the startup error. */
  readonly config: string;
  /** True once the peer serves; polled every 50 ms. */
  ready(): Promise<boolean>;
  /** How close() stops it. */
  readonly signal: NodeJS.Signals;
  readonly timeoutMs: number;
}

/** Starts `spec.bin` and resolves once `spec.ready()` says it serves. */
export async function startPeerProcess(spec: PeerSpec): Promise<PeerProcess> {
  let out = '';
  const child: ChildProcess = spawn(spec.bin, [...spec.args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  let exited = false;
  const exit = new Promise<void>((r) =>
    child.once('exit', () => {
      exited = true;
      r();
    }),
  );
  const close = async () => {
    if (!exited && child.pid !== undefined) process.kill(child.pid, spec.signal);
    await exit;
    await rm(spec.dir, { recursive: true, force: true });
  };
  const until = Date.now() + spec.timeoutMs;
  while (!(await spec.ready())) {
    if (exited || Date.now() > until) {
      await close();
      throw new Error(`${spec.name} did not start: ${out}\n--- config ---\n${spec.config}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { output: () => out, close };
}
