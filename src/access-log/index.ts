/** Access-log rules (issue 44 item 3): which lines are written, judged before serialising; and their format (issue 45 item 7). See README.md. */
export { AccessLogCounts, type LineCounts, NO_RULE } from './counts.ts';
export { type AccessFormat, accessLineFormatter } from './format.ts';
export { LINE_PRIMITIVES } from './primitives.ts';
export { ruledAccessLog } from './ruled-log.ts';
export { type AccessRules, accessRuleErrors, compileAccessRules, ruleLabel } from './rules.ts';
