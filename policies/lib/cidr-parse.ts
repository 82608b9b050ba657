/**
 * The lines of an address list parsed into a `CidrSet` (cidr-list.ts steps 2–4): in slices on
 * the event loop (`parseCidrList`), or at once in a list-load worker's thread
 * (`parseCidrListNow`). `#` starts a comment, blank lines are skipped, a bad line throws
 * `CidrListError` naming `file:line`.
 */
import { CidrListError } from './cidr-list-error.ts';
import { type CidrSet, CidrSetBuilder } from './cidr-set.ts';
import { TimeSlices } from './time-slices.ts';

/** How long one slice of a file's lines may run before yielding to the event loop. */
export const SLICE_MS = 4;

/** True for a space, a tab or a CR (what trimming a line drops). */
function blank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d;
}

/**
 * Parses up to `maxLines` lines of `text` from `at` (`line` lines before it) into `builder`;
 * where it stopped. A bad line throws `CidrListError` (step 3).
 */
function parseLines(
  text: string,
  file: string,
  builder: CidrSetBuilder,
  from: { at: number; line: number },
  maxLines: number,
): { at: number; line: number } {
  let { at, line } = from;
  for (let n = 0; n < maxLines && at < text.length; n++) {
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
  return { at, line };
}

/** Parses list text in slices (step 2); `file` names it in errors. */
export async function parseCidrList(text: string, file: string, builder = new CidrSetBuilder()): Promise<CidrSet> {
  const slices = new TimeSlices(SLICE_MS);
  let where = { at: 0, line: 0 };
  while (where.at < text.length) {
    where = parseLines(text, file, builder, where, 1024);
    await slices.pause();
  }
  return builder.buildInSlices(slices);
}

/** Parses list text at once (a list-load worker's thread, step 4): the set, or a `CidrListError`. */
export function parseCidrListNow(text: string, file: string): CidrSet {
  const builder = new CidrSetBuilder();
  parseLines(text, file, builder, { at: 0, line: 0 }, Number.POSITIVE_INFINITY);
  return builder.build();
}
