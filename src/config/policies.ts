/**
 * The schema of the top-level `policies:` list (issue 42), joined into the config schema
 * (schema.ts). It sits here, below src/policy/ (which compiles the rules), so the config
 * imports nothing above its row; the answer parts (status, headers, body limit) with it.
 *
 *   policies:
 *     - { name: deny-list, use: block, options: { file: conf/deny.txt } }
 *     - { name: admin, use: block, when: 'req_path_prefix_in("/admin", false)', action: { respond: 403 } }
 *
 * Each rule's `options` is checked later by its policy's own schema (src/policy/compile.ts),
 * with the rule's config path in every error.
 */
import { z } from 'zod';
import { POLICY_POINTS } from '../contracts/policy.ts';

/** The largest inline or file body an answer carries: 1 MiB (a maintenance page). */
export const ANSWER_BODY_LIMIT = 1024 * 1024;

/** A header name (RFC 9110 token); the framing headers are the router's. */
const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'expected a header name (letters, digits, -)')
  .refine((n) => !/^(content-length|transfer-encoding|connection)$/i.test(n), {
    message: 'the router writes Content-Length, Transfer-Encoding and Connection itself',
  });
/** A header value: visible text, no CR, LF or NUL. */
const headerValue = z.string().regex(/^[^\r\n\0]*$/, 'expected a header value without CR, LF or NUL');

/** `headers: { Retry-After: "120" }`. */
export const headersSchema = z.record(headerName, headerValue);

/** An HTTP status the router may answer with. */
export const statusSchema = z.number().int().min(200).max(599);

/** `respond: 403` or `respond: { status, headers, body, contentType }`. */
const respondSchema = z.union([
  statusSchema,
  z.strictObject({
    status: statusSchema,
    headers: headersSchema.optional(),
    body: z.string().max(ANSWER_BODY_LIMIT).optional(),
    contentType: z.string().min(1).optional(),
  }),
]);

/** A refusing rule's `action:`: `close`, or `{ respond: … }` (an answer; request points only). */
export const actionSchema = z.union([z.literal('close'), z.strictObject({ respond: respondSchema })]);

/** One rule. */
export const policyRuleSchema = z.strictObject({
  /** Unique; names the rule in logs, metrics and errors, and keeps its counters across reloads. */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected a name of letters, digits, ., _ and -'),
  /** A built-in policy (`block`, `respond`, `redirect`, `rate-limit`, `in-flight`) or a module path. */
  use: z.string().min(1),
  /** Where it runs; default: the earliest point of the policy that knows what the rule needs. */
  point: z.enum(POLICY_POINTS).optional(),
  /** A condition in BFE's language, compiled once per snapshot. */
  when: z.string().min(1).optional(),
  /** Only requests routed to these products / clusters (the `routed` point). */
  products: z.array(z.string().min(1)).min(1).optional(),
  clusters: z.array(z.string().min(1)).min(1).optional(),
  action: actionSchema.optional(),
  /** Checked by the policy's own schema. */
  options: z.unknown().optional(),
});

/** The ordered `policies:` list; names are unique. */
export const policiesSchema = z.array(policyRuleSchema).superRefine((rules, ctx) => {
  const seen = new Set<string>();
  rules.forEach((r, i) => {
    if (seen.has(r.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate rule name ${r.name}` });
    seen.add(r.name);
  });
});

export type PolicyRuleConfig = z.output<typeof policyRuleSchema>;
export type PoliciesConfig = z.output<typeof policiesSchema>;
export type ActionConfig = z.output<typeof actionSchema>;
