/**
 * Files that are not files, planted where the router reads one (issue 39 item 7): a FIFO (a
 * blocking read waits for a writer), a symlink to `/dev/zero` (a read never ends), and a bound on
 * waiting for what should answer at once. Tests of src/base/safe-file.ts and of its callers share them.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, lstatSync, openSync } from 'node:fs';

/** Creates a FIFO at `path` (coreutils `mkfifo`). */
export function mkfifo(path: string): void {
  execFileSync('mkfifo', ['-m', '0600', path]);
}

/**
 * Lets every reader blocked on the FIFO at `path` go (a writer opens and closes it: they read
 * end of file), so a test of code that blocked still ends. Returns how many opens succeeded.
 */
export function releaseFifoReaders(path: string, rounds = 64): number {
  let n = 0;
  try {
    if (!lstatSync(path).isFIFO()) return 0;
  } catch {
    return 0;
  }
  for (let i = 0; i < rounds; i++) {
    try {
      // Non-blocking open for writing fails with ENXIO when nobody has it open for reading.
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
      n++;
    } catch {
      break;
    }
  }
  return n;
}

/** `promise`, or a rejection naming `what` once `ms` have passed (a hang fails, never stalls). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_r, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resident set size of this process, MiB. */
export function rssMiB(): number {
  return process.memoryUsage.rss() / (1024 * 1024);
}
