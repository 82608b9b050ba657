/**
 * One run of the real CLI (`node bin/switchboard.js ARGS`) to completion, asynchronously (the
 * test process keeps serving its backends meanwhile): exit code, stdout and stderr.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node bin/switchboard.js ...args` in the repository root. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/switchboard.js', ...args], { cwd: ROOT, env }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** True when `stderr` shows a stack trace (`    at f (file:1:2)`). */
export function hasStack(stderr: string): boolean {
  return /^\s+at .+[:(]/m.test(stderr);
}
