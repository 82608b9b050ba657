/**
 * The router under soak: the real CLI in a child process with extra arguments (`--panel worker
 * --workers 2`) and its inspector on a free port (for gc.ts), its JSON log parsed from stderr, and its RSS and descriptors read from /proc
 * (the whole process: every worker thread's memory is in the one RSS).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** One JSON log line of the child. */
export type LogLine = Record<string, unknown> & { msg?: string };

/** A running router child process. */
export interface RouterProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly logs: LogLine[];
  /** Resolves with the first log line matching `pred` (polls; generous limit). */
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Port of listener `name`, from its 'listening' line. */
  port(name: string): Promise<number>;
  /** The inspector's WebSocket URL (the child runs with `--inspect=127.0.0.1:0`, for gc.ts). */
  inspector(): Promise<string>;
  readonly exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts `node --inspect=127.0.0.1:0 bin/switchboard.js start --config <file> ...args`. */
export function startRouterProcess(configFile: string, args: readonly string[] = []): RouterProcess {
  const child = spawn(
    process.execPath,
    ['--inspect=127.0.0.1:0', 'bin/switchboard.js', 'start', '--config', configFile, ...args],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const logs: LogLine[] = [];
  let buffered = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const l of lines) {
      try {
        logs.push(JSON.parse(l) as LogLine);
      } catch {
        logs.push({ msg: l });
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForLog = async (pred: (l: LogLine) => boolean, timeoutMs = 20_000): Promise<LogLine> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const hit = logs.find(pred);
      if (hit !== undefined) return hit;
      if (Date.now() > until || child.exitCode !== null)
        throw new Error(`router: no matching log line; have:\n${logs.map((l) => JSON.stringify(l)).join('\n')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    child,
    pid: child.pid ?? 0,
    logs,
    exited,
    waitForLog,
    async port(name) {
      const line = await waitForLog((l) => l.msg === 'listening' && l.listener === name);
      return Number(String(line.address).split(':').pop());
    },
    async inspector() {
      const line = await waitForLog((l) => String(l.msg).startsWith('Debugger listening on '));
      return String(line.msg).slice('Debugger listening on '.length).trim();
    },
    kill(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
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
