/**
 * `respond` (BFE mod_static, Skipper `status`/`inlineContent`, HAProxy `http-request return`):
 * answer in the router's own words, nothing forwarded: a maintenance page for one product.
 *
 *   - { name: maintenance, use: respond, products: [shop],
 *       options: { status: 503, file: conf/maintenance.html, headers: { Retry-After: "120" } } }
 *
 * 1. `status` (default 503), `headers`, and a body: `body:` inline or `file:` (read at
 *    `start()` with src/base/safe-file.ts, at most 1 MiB), `contentType` (default text/plain,
 *    text/html for a `.html` file).
 * 2. The answer is built once; every request the rule selects gets the same frozen object.
 */
import { extname, resolve } from 'node:path';
import { z } from 'zod';
import { readUserFile } from '../src/base/safe-file.ts';
import type { PolicyFactory, PolicyInstance, PolicyVerdict } from '../src/contracts/policy.ts';
import { ANSWER_BODY_LIMIT, headersSchema, makeAnswer, statusSchema } from '../src/policy/answer.ts';

const options = z
  .strictObject({
    status: statusSchema.default(503),
    headers: headersSchema.optional(),
    body: z.string().max(ANSWER_BODY_LIMIT).optional(),
    /** A file whose bytes are the body (relative to the config file). */
    file: z.string().min(1).optional(),
    contentType: z.string().min(1).optional(),
  })
  .refine((o) => o.body === undefined || o.file === undefined, { message: 'give body or file, not both' });

type RespondOptions = z.output<typeof options>;

const ANSWER_FILE = { bytes: ANSWER_BODY_LIMIT, what: 'answer bodies' };

/** The `respond` policy factory. */
export const respond = {
  name: 'respond',
  options,
  points: ['request', 'routed'],
  create(o: RespondOptions, ctx): PolicyInstance {
    const file = o.file === undefined ? undefined : resolve(ctx.configDir, o.file);
    const contentType =
      o.contentType ??
      (file !== undefined && /^\.html?$/i.test(extname(file)) ? 'text/html; charset=utf-8' : undefined);
    const verdictOf = (body: string | Uint8Array | undefined): PolicyVerdict =>
      Object.freeze({
        action: 'answer',
        answer: makeAnswer({ status: o.status, headers: o.headers, body, contentType }),
      });
    let verdict = verdictOf(o.body);
    const decide = (): PolicyVerdict => verdict;
    return {
      request: decide,
      routed: decide,
      async start() {
        if (file !== undefined) verdict = verdictOf(new Uint8Array(await readUserFile(file, ANSWER_FILE)));
      },
    };
  },
} satisfies PolicyFactory<RespondOptions>;
