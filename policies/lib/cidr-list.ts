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
 */
import { SwitchboardError } from '../../src/base/errors.ts';
import { CONFIG_FILE, readUserText } from '../../src/base/safe-file.ts';
import { type CidrSet, CidrSetBuilder } from './cidr-set.ts';
import { TimeSlices } from './time-slices.ts';

/** How long one slice of a file's lines may run before yielding to the event loop. */
export const SLICE_MS = 4;

/** A line of an address list that is not an address or CIDR: `conf/deny.txt:12: bad …`. */
export class CidrListError extends SwitchboardError {
  /** The file ('' for an inline list) and the 1-based line (or index + 1 inline). */
  readonly file: string;
  readonly line: number;
  constructor(file: string, line: number, entry: string) {
    super(
      'SWB_ERR_CONFIG',
      `${file}:${line}: bad address or CIDR ${JSON.stringify(entry)} (expected 10.0.0.0/8, 192.0.2.1 or 2001:db8::/32)`,
    );
    this.name = 'CidrListError';
    this.file = file;
    this.line = line;
  }
}

/** An inline list (`cidrs: [...]`); `where` names it in errors (`policies[0].options.cidrs`). */
export function cidrSetOf(entries: readonly string[], where: string): CidrSet {
  const builder = new CidrSetBuilder();
  entries.forEach((e, i) => {
    if (!builder.add(e.trim())) throw new CidrListError(where, i + 1, e);
  });
  return builder.build();
}

/** True for a space, a tab or a CR (what trimming a line drops). */
function blank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d;
}

/** Parses list text in slices (step 2); `file` names it in errors. */
export async function parseCidrList(text: string, file: string, builder = new CidrSetBuilder()): Promise<CidrSet> {
  const slices = new TimeSlices(SLICE_MS);
  let at = 0;
  let line = 0;
  while (at < text.length) {
    for (let n = 0; n < 1024 && at < text.length; n++) {
      let end = text.indexOf('\n', at);
      if (end < 0) end = text.length;
      line++;
      let s = at;
      let e = s;
      while (e < end && text.charCodeAt(e) !== 0x23) e++; // '#' starts a comment
      while (s < e && blank(text.charCodeAt(s))) s++;
      while (e > s && blank(text.charCodeAt(e - 1))) e--;
      if (s < e && !builder.addSpan(text, s, e)) throw new CidrListError(file, line, text.slice(s, e));
      at = end + 1;
    }
    await slices.pause();
  }
  return builder.buildInSlices(slices);
}

/** Reads and parses a list file (steps 1–3). */
export async function loadCidrFile(file: string): Promise<CidrSet> {
  return parseCidrList(await readUserText(file, CONFIG_FILE), file);
}
