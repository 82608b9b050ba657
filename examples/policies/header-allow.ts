/**
 * `header-allow`: a custom policy, written the way a user would (see README.md). It lets a
 * request through only when one of its headers carries an allowed value, and answers every other
 * request itself (403 by default), in the router's own words; it never touches what it forwards.
 * Load it from config by path, relative to the config file:
 *
 *   policies:
 *     - { name: api-key, use: ./header-allow.ts, options: { header: X-Api-Key, allow: [k1, k2] } }
 *
 * 1. The factory (`export default`) has a `name`, an `options` schema (zod; the router checks a
 *    rule's `options:` with it and names the rule's config path in every error), the `points` it
 *    can run at, and a pure `create(options, context)`.
 * 2. `create` builds everything once per config snapshot: the allowed values as a Set and the
 *    refusal answer (status, headers, body bytes), so a request costs one header read and one
 *    Set lookup, and allocates nothing.
 * 3. At the `request` point (the head read, before the address book) it returns `undefined` to
 *    let the request go on, or `{ action: 'answer', answer }` to answer it. The router frames the
 *    answer (Content-Length, Connection) for HTTP/1 and HTTP/2 alike.
 * 4. The only import from the router is a type (`import type`): it is erased when Node strips
 *    the types, so the module loads natively (`node` 24) and holds no copy of router code.
 */
import { z } from 'zod';
import type { PolicyAnswer, PolicyFactory, PolicyInstance } from '../../src/contracts/policy.ts';

const options = z.strictObject({
  /** The header to read (case-insensitive; its first value). */
  header: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'expected a header name'),
  /** The values let through, compared exactly. A request without the header is refused. */
  allow: z.array(z.string().min(1)).min(1),
  /** The status of the refusal. */
  status: z.number().int().min(400).max(499).default(403),
  /** The body of the refusal (plain text). */
  body: z.string().max(4096).default('forbidden\n'),
});

/** The options after defaults. */
export type HeaderAllowOptions = z.output<typeof options>;

export default {
  name: 'header-allow',
  options,
  points: ['request'],
  create(o: HeaderAllowOptions): PolicyInstance {
    const allowed = new Set(o.allow);
    const refusal: PolicyAnswer = {
      status: o.status,
      headers: [['Content-Type', 'text/plain; charset=utf-8']],
      body: new TextEncoder().encode(o.body),
    };
    return {
      request({ request }) {
        const value = request.header(o.header);
        return value !== undefined && allowed.has(value) ? undefined : { action: 'answer', answer: refusal };
      },
    };
  },
} satisfies PolicyFactory<HeaderAllowOptions>;
