/**
 * The router under soak: the real CLI in a child process with extra arguments (`--panel worker
 * --workers 2`) and its inspector on a free port (for gc.ts), its JSON log parsed from stderr, and its RSS and descriptors read from /proc
 * (the whole process: every worker thread's memory is in the one RSS).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { type CliRouter, spawnCli } from '../harness/cli.ts';

/** A running router child process, with its pid and inspector URL. */
export interface RouterProcess extends CliRouter {
  readonly pid: number;
  /** The inspector's WebSocket URL (the child runs with `--inspect=127.0.0.1:0`, for gc.ts). */
  inspector(): Promise<string>;
}

/** Starts `node --inspect=127.0.0.1:0 bin/switchboard.js start --config <file> ...args`. */
export function startRouterProcess(configFile: string, args: readonly string[] = []): RouterProcess {
  const cli = spawnCli(configFile, { nodeArgs: ['--inspect=127.0.0.1:0'], args });
  return {
    ...cli,
    pid: cli.child.pid ?? 0,
    async inspector() {
      const line = await cli.waitForLog((l) => String(l.msg).startsWith('Debugger listening on '));
      return String(line.msg).slice('Debugger listening on '.length).trim();
    },
  };
}

/** Resident set size of process `pid` in bytes (all threads). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/** Open file descriptors of process `pid`. */
export function fdsOf(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** The median of `n` readings taken `everyMs` apart (one reading is noise; a GC moves RSS a lot). */
export async function medianOf(read: () => number, n: number, everyMs: number): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, everyMs));
    values.push(read());
  }
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)] ?? 0;
}
