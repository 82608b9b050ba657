/**
 * The real CLI in a child process (`node bin/switchboard.js start --config F`), optionally under
 * a low `ulimit -n`. Its pino log (stderr, JSON lines) is parsed so tests can wait for a message
 * and read bound addresses.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** One JSON log line of the child. */
export type LogLine = Record<string, unknown> & { msg?: string };

export interface CliRouter {
  readonly child: ChildProcess;
  readonly logs: LogLine[];
  /** Resolves with the first log line matching `pred` (polls; generous limit). */
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Port of the listener `name` from its 'listening' line. */
  port(name: string): Promise<number>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

/** How to start the CLI child. */
export interface SpawnOptions {
  /** Run under `bash -c 'ulimit -n N; exec node …'`. */
  readonly ulimit?: number;
  /** Flags for node itself, before the script (e.g. `--inspect=127.0.0.1:0`). */
  readonly nodeArgs?: readonly string[];
  /** Extra `start` arguments (e.g. `--panel worker --workers 2`). */
  readonly args?: readonly string[];
  /** Variables set (or, with '', emptied) over the test's own environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts `node [nodeArgs] bin/switchboard.js start --config F [args]`, optionally under a ulimit. */
export function spawnCli(configFile: string, options: SpawnOptions = {}): CliRouter {
  const node = process.execPath;
  const args = [
    ...(options.nodeArgs ?? []),
    'bin/switchboard.js',
    'start',
    '--config',
    configFile,
    ...(options.args ?? []),
  ];
  const spawnOptions = {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'] as ['ignore', 'ignore', 'pipe'],
  };
  const child =
    options.ulimit === undefined
      ? spawn(node, args, spawnOptions)
      : spawn('bash', ['-c', `ulimit -n ${options.ulimit}; exec "$0" "$@"`, node, ...args], spawnOptions);
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
  const waitForLog = async (pred: (l: LogLine) => boolean, timeoutMs = 15_000): Promise<LogLine> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const hit = logs.find(pred);
      if (hit !== undefined) return hit;
      if (Date.now() > until || child.exitCode !== null) {
        throw new Error(`no matching log line; have:\n${logs.map((l) => JSON.stringify(l)).join('\n')}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    child,
    logs,
    exited,
    waitForLog,
    async port(name) {
      const line = await waitForLog((l) => l.msg === 'listening' && l.listener === name);
      return Number(String(line.address).split(':').pop());
    },
    kill(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
    },
  };
}
