/**
 * A long address list parsed off the event loop (cidr-list.ts step 4): the file's bytes go to a
 * worker thread (transferred, not copied), which parses, sorts and merges them
 * (cidr-list-worker.ts) and sends back the four range tables (transferred too). The event loop
 * only starts the thread and wraps the tables in a `CidrSet`.
 *
 * 1. One thread per load, ended when it answered: loads are rare (start, a reload, a file
 *    edit) and a thread left idle would hold its isolate's memory.
 * 2. A bad line comes back as its file, line and entry and is thrown here as the same
 *    `CidrListError` the slices would throw.
 * 3. A thread that fails otherwise (it could not start, it died) is a broken invariant:
 *    `InternalError`, never a silently empty list.
 */
import { Worker } from 'node:worker_threads';
import { InternalError } from '../../src/base/errors.ts';
import { CidrListError } from './cidr-list-error.ts';
import type { ListLoadAnswer, ListLoadJob } from './cidr-list-job.ts';
import { CidrSet } from './cidr-set.ts';

/** Files at least this large (about 15,000 lines) are parsed in a worker thread. */
export const WORKER_BYTES = 256 * 1024;

const entry = new URL('./cidr-list-worker.ts', import.meta.url);

/** Parses `bytes`, the content of `file`, in a worker thread (steps 1–3). */
export function loadInWorker(bytes: Uint8Array, file: string): Promise<CidrSet> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(entry, { name: 'switchboard-list-load' });
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      f();
      void worker.terminate();
    };
    worker.once('message', (a: ListLoadAnswer) =>
      settle(() => {
        if (a.ok) resolve(new CidrSet(a.v4Starts, a.v4Ends, a.v6Starts, a.v6Ends));
        else reject(new CidrListError(a.file, a.line, a.entry));
      }),
    );
    worker.once('error', (e) =>
      settle(() => reject(new InternalError(`address list ${file}: its load thread failed: ${e.message}`))),
    );
    worker.once('exit', (code) =>
      settle(() =>
        reject(new InternalError(`address list ${file}: its load thread exited (${code}) without an answer`)),
      ),
    );
    // Transfer needs a buffer of its own: a view into a larger (pooled) one is copied first.
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
    const job: ListLoadJob = { bytes: own, file };
    worker.postMessage(job, [own.buffer as ArrayBuffer]);
  });
}
