/**
 * `switchboard start --pid-file PATH`, for service managers (systemd `PIDFile=`, OpenRC, monit):
 *
 * 1. Before anything binds, `checkPidFile` refuses to start when the file names a live process
 *    (one line, exit 1, as for a port in use); a file naming no process, or not a pid, is stale
 *    and will be replaced.
 * 2. Once every listener (and the admin listener) is bound, `writePidFile` writes the pid and a
 *    newline through a temporary file and a rename, so a reader never sees half a file.
 * 3. At exit, whatever the way (drained, a second signal, a crash), the file is removed if it
 *    still holds this process's pid (a file another router has taken over is left alone).
 */
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { SwitchboardError } from '../src/base/errors.ts';

/** The pid a pid file names, or undefined when it is missing or holds no pid. */
export function readPid(path: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Whether a process with this pid exists (one we may not signal counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Throws `SWB_ERR_PID_FILE` when `path` names a live process other than this one. */
export function checkPidFile(path: string): void {
  const pid = readPid(path);
  if (pid !== undefined && pid !== process.pid && processAlive(pid)) {
    throw new SwitchboardError(
      'SWB_ERR_PID_FILE',
      `--pid-file: ${path} names process ${pid}, which is running (another router?); stop it or remove the file`,
    );
  }
}

/** Writes this process's pid to `path` (atomically) and removes it at exit; returns the removal. */
export function writePidFile(path: string): () => void {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, `${process.pid}\n`, { mode: 0o644 });
    renameSync(temp, path);
  } catch (e) {
    try {
      unlinkSync(temp);
    } catch {
      // Never written.
    }
    throw new SwitchboardError('SWB_ERR_PID_FILE', `--pid-file: cannot write ${path}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  const remove = () => {
    process.removeListener('exit', remove);
    if (readPid(path) !== process.pid) return;
    try {
      unlinkSync(path);
    } catch {
      // Already gone: nothing to clean.
    }
  };
  process.on('exit', remove);
  return remove;
}
