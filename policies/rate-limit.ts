/**
 * `rate-limit` (BFE mod_prison, Envoy local rate limit, Traefik `rateLimit`, Skipper
 * `clientRatelimit`): at most `rate` events per key, `burst` at once, by GCRA
 * (src/policy/gcra.ts).
 *
 *   - { name: api-rate, use: rate-limit, when: 'req_path_prefix_in("/api", false)',
 *       options: { key: client-ip, rate: 100/s, burst: 200 } }
 *
 * 1. At `connection` it limits new connections, at `request`/`routed` requests (each HTTP/2
 *    stream is one). Without `when:` or a request key it runs at `connection`; `point:` says
 *    otherwise.
 * 2. The key (lib/key.ts): client address (IPv6 by /64), a header, the host, the product, the
 *    cluster, or the rule as a whole.
 * 3. Over the limit: 429 with `Retry-After` (seconds until the next event is allowed, rounded
 *    up), or `close` at the connection points; the rule's `action:` may say otherwise
 *    (`Retry-After` is added to an answer).
 * 4. The key table holds at most `maxKeys` keys (default 100,000), least recently used
 *    forgotten first. The counter is kept by rule identity: a reload that leaves the rule as
 *    it was keeps its state, so it hands out no fresh burst.
 * 5. `scope: fleet` counts across the fleet (lib/scope.ts, docs/fleet.md "Limits"); with
 *    `failMode: closed` and Redis out of reach it answers 503 (close at `connection`).
 */
import { z } from 'zod';
import type { PointContext, PolicyFactory, PolicyInstance, PolicyVerdict } from '../src/contracts/policy.ts';
import { makeAnswer, withHeaders } from '../src/policy/answer.ts';
import { checkKeyHeader, keyOf, keyOptions, keyPoint } from './lib/key.ts';
import { rateSchema } from './lib/rate.ts';
import { refusalOf } from './lib/refusal.ts';
import { checkScope, counterScope, scopeOptions, unavailableRefusal } from './lib/scope.ts';

const options = z
  .strictObject({
    ...keyOptions,
    ...scopeOptions,
    rate: rateSchema,
    /** Events allowed at once; default: the rate's count (100 for 100/s). */
    burst: z.number().int().min(1).optional(),
    maxKeys: z.number().int().min(1).default(100_000),
  })
  .superRefine((o, ctx) => {
    checkKeyHeader(o, ctx);
    checkScope(o, ctx);
  });

type RateLimitOptions = z.output<typeof options>;

const TOO_MANY = makeAnswer({ status: 429, body: 'too many requests\n' });

/** `Retry-After` for a wait in milliseconds: whole seconds, rounded up, at least 1. */
export function retryAfter(waitMs: number): string {
  return String(Math.max(1, Math.ceil(waitMs / 1000)));
}

/** The `rate-limit` policy factory. */
export const rateLimit = {
  name: 'rate-limit',
  options,
  points: ['connection', 'request', 'routed'],
  refuses: true,
  needs: keyPoint,
  create(o: RateLimitOptions, ctx): PolicyInstance {
    const counter = ctx.counters.rate(
      {
        rate: o.rate.count,
        per: o.rate.per,
        burst: o.burst ?? Math.max(1, Math.floor(o.rate.count)),
        maxKeys: o.maxKeys,
      },
      counterScope(o),
    );
    const refusal = refusalOf(ctx.action, ctx.point, TOO_MANY);
    const unavailable = unavailableRefusal(ctx.action, ctx.point);
    const now = ctx.now;
    const decide = (c: PointContext): PolicyVerdict | undefined => {
      const wait = counter.take(keyOf(o, c), now());
      if (wait === 0) return undefined;
      if (counter.unavailable === true) return unavailable;
      if (refusal.action !== 'answer') return refusal;
      return { action: 'answer', answer: withHeaders(refusal.answer, [['Retry-After', retryAfter(wait)]]) };
    };
    return { connection: decide, request: decide, routed: decide };
  },
} satisfies PolicyFactory<RateLimitOptions>;
