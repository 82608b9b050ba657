/**
 * The list-load thread (cidr-list-load.ts): takes one file's bytes, parses, sorts and merges
 * them at once (no slices: this thread serves nothing else), and answers the range tables, or
 * the bad line.
 */
import { parentPort } from 'node:worker_threads';
import { CidrListError } from './cidr-list-error.ts';
import type { ListLoadAnswer, ListLoadJob } from './cidr-list-job.ts';
import { parseCidrListNow } from './cidr-parse.ts';

parentPort?.once('message', (job: ListLoadJob) => {
  let answer: ListLoadAnswer;
  try {
    const set = parseCidrListNow(
      Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength).toString('latin1'),
      job.file,
    );
    const t = set.tables();
    answer = { ok: true, ...t };
    parentPort?.postMessage(answer, [
      t.v4Starts.buffer,
      t.v4Ends.buffer,
      t.v6Starts.buffer,
      t.v6Ends.buffer,
    ] as ArrayBuffer[]);
  } catch (e) {
    if (!(e instanceof CidrListError)) throw e;
    answer = { ok: false, file: e.file, line: e.line, entry: e.entry };
    parentPort?.postMessage(answer);
  }
});
