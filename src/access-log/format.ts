/**
 * `log.accessFormat` (issue 45 item 7): how an access record becomes text. `json` (the
 * default) is pino's JSON line, made by the access log itself (src/base/log.ts), so this gives
 * no formatter for it; `combined` and `pretty` are made here. The format applies where lines
 * are written: on the worker panel the main thread writes every thread's lines, so one
 * implementation serves every panel.
 */
import { isatty } from 'node:tty';
import type { AccessRecord } from '../base/log.ts';
import { combinedLine } from './format-combined.ts';
import { prettyLine } from './format-pretty.ts';

/** The `log.accessFormat` values. */
export type AccessFormat = 'json' | 'combined' | 'pretty';

/**
 * The line maker for `format` writing to `target` (undefined for `json`); pretty lines are
 * coloured only on stdout when it is a terminal and `NO_COLOR` is unset.
 */
export function accessLineFormatter(
  format: AccessFormat,
  target: string,
  tty = isatty(1),
): ((record: AccessRecord) => string) | undefined {
  if (format === 'combined') return (r) => combinedLine(r);
  if (format === 'json') return undefined;
  const colour = target === 'stdout' && tty && process.env.NO_COLOR === undefined;
  return (r) => prettyLine(r, colour);
}
