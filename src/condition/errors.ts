/**
 * Build errors of the condition language: `<where>: column N: <what was expected>` (STYLE §12),
 * always a SwitchboardError with code SWB_ERR_CONDITION.
 */
import { SwitchboardError } from '../base/errors.ts';

/** Human position of a 0-based offset: `column C`, or `line L, column C` in multi-line sources. */
export function position(source: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < source.length; i++) {
    if (source.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  const column = offset - lineStart + 1;
  return source.includes('\n') ? `line ${line}, column ${column}` : `column ${column}`;
}

/** The typed error for a problem at `offset` in `source`, prefixed by the config path. */
export function conditionError(where: string, source: string, offset: number, message: string): SwitchboardError {
  return new SwitchboardError('SWB_ERR_CONDITION', `${where}: ${position(source, offset)}: ${message}`);
}
