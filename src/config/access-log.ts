/**
 * The schema of `log.access` (issue 44 item 3), joined into the config schema (schema.ts):
 * a target as before, or the target with rules that decide, line by line, which lines are
 * written (src/access-log/, docs/logging.md).
 *
 *   log:
 *     access: /var/log/switchboard/access.log          # as before: stdout | off | a file
 *     access:
 *       file: /var/log/switchboard/access.log
 *       rules:
 *         - { when: 'req_host_in("health.internal")', log: false }
 *         - { statuses: [5xx, 429], log: true }
 *         - { minDuration: 500ms }
 *         - { sample: 0.01 }
 *
 * A rule's `when:` is compiled (and its primitives checked against what a line knows) by
 * src/access-log/ at config load, with the rule's path in every error.
 */
import { z } from 'zod';
import { RESULT_STATUS } from '../base/errors.ts';
import { duration } from './duration.ts';

/**
 * The result codes an access line can carry (docs/operations.md "Access log"): the wire results, `ok`, and
 * the ends the data path names itself. The admin listener's refusals never reach the log.
 */
export const ACCESS_RESULTS: readonly string[] = [
  'ok',
  ...Object.keys(RESULT_STATUS).filter(
    (r) => !['unauthorized', 'host_not_allowed', 'cross_origin', 'unsupported_media_type'].includes(r),
  ),
  'client_closed',
  'idle_timeout',
  'client_error',
  'upstream_error',
  'upstream_closed',
  'internal_error',
  'client_reset',
  'policy_answered',
  'policy_closed',
];

/** `404`, `0` (a line without a status: a connection closed or spliced), or a class `4xx`. */
const statusElement = z.union([
  z.literal(0),
  z.number().int().min(100).max(599),
  z.string().regex(/^[1-5]xx$/, 'expected a status class like 4xx or 5xx'),
]);

/** One rule: every key given must match (none: every line); the first rule that matches decides. */
export const accessLogRuleSchema = z
  .strictObject({
    /** Names the rule in /metrics (`rule` label); default: its index (`rules[2]`). */
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected a name of letters, digits, ., _ and -')
      .optional(),
    /** A condition in BFE's language over the line's request (host, path, method, client, listener, time). */
    when: z.string().min(1).optional(),
    /** Lines with one of these statuses or classes; `0` is a line without a status. */
    statuses: z.array(statusElement).min(1).optional(),
    /** Lines with one of these results (`no_route`, `policy_closed`…). */
    results: z
      .array(z.enum(ACCESS_RESULTS as [string, ...string[]]))
      .min(1)
      .optional(),
    /** Lines routed to one of these products / clusters (the line's `product`, `cluster`). */
    products: z.array(z.string().min(1)).min(1).optional(),
    clusters: z.array(z.string().min(1)).min(1).optional(),
    /** Lines that took at least this long (`durationMs`). */
    minDuration: duration.optional(),
    /** Writes this ratio of the lines the rule matches (0..1) and skips the others. */
    sample: z.number().min(0).max(1).optional(),
    /** Write (true, the default) or skip the lines the rule matches. */
    log: z.boolean().default(true),
  })
  .superRefine((r, ctx) => {
    if (r.sample !== undefined && !r.log) {
      ctx.addIssue({
        code: 'custom',
        path: ['sample'],
        message: 'sample writes a ratio of the lines; with log: false use no sample (every match is skipped)',
      });
    }
  });

/** The ordered rules; names are unique. */
export const accessLogRulesSchema = z.array(accessLogRuleSchema).superRefine((rules, ctx) => {
  const seen = new Set<string>();
  rules.forEach((r, i) => {
    if (r.name === undefined) return;
    if (seen.has(r.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate rule name ${r.name}` });
    seen.add(r.name);
  });
});

/** `log.access`: `stdout` | `off` | a file path, or `{ file, rules }`. */
export const accessLogSchema = z.union([
  z.string(),
  z.strictObject({
    /** `stdout` (the default), `off` or a file path. */
    file: z.string().default('stdout'),
    /** In order; a line no rule matches is written. */
    rules: accessLogRulesSchema.default([]),
  }),
]);

export type AccessLogRuleConfig = z.output<typeof accessLogRuleSchema>;
