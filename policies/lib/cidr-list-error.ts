/** The error of an address list's bad line, naming `file:line` (cidr-list.ts step 3). */
import { SwitchboardError } from '../../src/base/errors.ts';

/** A line of an address list that is not an address or CIDR: `conf/deny.txt:12: bad …`. */
export class CidrListError extends SwitchboardError {
  /** The file ('' for an inline list) and the 1-based line (or index + 1 inline). */
  readonly file: string;
  readonly line: number;
  /** The entry as written on that line. */
  readonly entry: string;
  constructor(file: string, line: number, entry: string) {
    super(
      'SWB_ERR_CONFIG',
      `${file}:${line}: bad address or CIDR ${JSON.stringify(entry)} (expected 10.0.0.0/8, 192.0.2.1 or 2001:db8::/32)`,
    );
    this.name = 'CidrListError';
    this.file = file;
    this.line = line;
    this.entry = entry;
  }
}
