/**
 * The access log with its rules in front: each line is judged (`rules.ts`) before the
 * destination sees it, so a skipped line is never copied, serialised or written.
 */
import type { AccessRecord, ReopenableAccessLog } from '../base/log.ts';
import type { AccessRules } from './rules.ts';

/** `target` behind `rules`; `off` stays `off` (nothing judged, nothing counted). */
export function ruledAccessLog(target: ReopenableAccessLog, rules: AccessRules): ReopenableAccessLog {
  if (target.off === true) return target;
  const log = (record: AccessRecord): void => {
    if (rules.keep(record)) target(record);
  };
  return Object.assign(log, {
    reopen: () => target.reopen(),
    flush: () => target.flush(),
  });
}
