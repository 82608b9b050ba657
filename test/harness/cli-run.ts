/**
 * The real CLI run to completion (`node bin/switchboard.js ARGS`), for commands that exit
 * (`check`, `schema`, a `start` that fails): exit code, stdout, stderr. The child's pino lines
 * (JSON) are kept apart from the plain lines a failure prints.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stderr without pino's JSON log lines: what the CLI itself printed. */
  readonly messages: string[];
}

export interface RunOptions {
  /** The node binary (default: this process's). */
  readonly node?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Kill after this long (a `start` that did not fail); the result then has code null. */
  readonly timeoutMs?: number;
  /** Run this script instead of bin/switchboard.js (relative to the repository). */
  readonly script?: string;
}

/** Runs the CLI with `args` from the repository root and waits for it to exit. */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  const child = spawn(options.node ?? process.execPath, [options.script ?? 'bin/switchboard.js', ...args], {
    cwd: ROOT,
    env: { ...process.env, SWITCHBOARD_DEBUG: '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      const messages = stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{"level"'));
      resolve({ code, stdout, stderr, messages });
    });
  });
}

/** Writes `text` to `dir/name` and runs `switchboard check --config` on it. */
export async function checkText(dir: string, name: string, text: string): Promise<CliResult & { file: string }> {
  const file = join(dir, name);
  await writeFile(file, text);
  return { ...(await runCli(['check', '--config', file])), file };
}

/** A stack trace line (`    at fn (file:1:2)`). */
export const STACK = /\n\s+at /;

/** True when `stderr` shows a stack trace (`    at f (file:1:2)`). */
export function hasStack(stderr: string): boolean {
  return /^\s+at .+[:(]/m.test(stderr);
}
