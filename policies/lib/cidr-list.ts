/**
 * Address lists: inline entries, or a file with one entry per line (`#` starts a comment, blank
 * lines are skipped), parsed into a `CidrSet`.
 *
 * 1. A file is read with src/base/safe-file.ts (regular files only, 64 MiB cap).
 * 2. Its lines are parsed, then sorted and merged, in slices of `SLICE_MS` milliseconds with
 *    `setImmediate` between them (time-slices.ts), so a 1,000,000-line list never holds the
 *    event loop for long: live traffic runs between slices.
 * 3. A bad line refuses the whole list with a `CidrListError` naming `file:line`; the caller
 *    keeps the list it had.
 * 4. A file of `WORKER_BYTES` or more (about 15,000 lines) is read as bytes (the read is the
 *    thread pool's) and parsed, sorted and merged in a worker thread (cidr-list-load.ts): the
 *    event loop only receives the finished ranges. (In slices, a 1,000,000-line list left p99
 *    of live traffic at 4× its level before the load: decoding 14.6 MB into one string alone
 *    held the loop 54–217 ms.) Smaller files take the slices of step 2.
 */
import { CONFIG_FILE, readUserFile } from '../../src/base/safe-file.ts';
import { CidrListError } from './cidr-list-error.ts';
import { loadInWorker, WORKER_BYTES } from './cidr-list-load.ts';
import { parseCidrList } from './cidr-parse.ts';
import { type CidrSet, CidrSetBuilder } from './cidr-set.ts';

export { CidrListError } from './cidr-list-error.ts';
export { parseCidrList, parseCidrListNow, SLICE_MS } from './cidr-parse.ts';

/** An inline list (`cidrs: [...]`); `where` names it in errors (`policies[0].options.cidrs`). */
export function cidrSetOf(entries: readonly string[], where: string): CidrSet {
  const builder = new CidrSetBuilder();
  entries.forEach((e, i) => {
    if (!builder.add(e.trim())) throw new CidrListError(where, i + 1, e);
  });
  return builder.build();
}

/** Reads and parses a list file (steps 1–4). */
export async function loadCidrFile(file: string): Promise<CidrSet> {
  const bytes = await readUserFile(file, CONFIG_FILE);
  if (bytes.length < WORKER_BYTES) return parseCidrList(bytes.toString('latin1'), file);
  return loadInWorker(bytes, file);
}
