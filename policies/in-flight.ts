/**
 * `in-flight` (Traefik `inFlightReq`/`inFlightConn`, HAProxy `sc_conn_cur`): at most `max`
 * connections, requests or streams in progress per key.
 *
 *   - { name: per-client, use: in-flight, point: request, options: { key: client-ip, max: 32 } }
 *
 * 1. At `connection` it counts connections, at `request`/`routed` requests (an HTTP/2 stream is
 *    one). Without `when:` or a request key it runs at `connection`.
 * 2. Under `max`: let through holding a slot. The verdict carries the `Hold`; the panel
 *    releases it when the request, stream or connection ends, on every end path, and a second
 *    release does nothing (src/policy/concurrency.ts).
 * 3. At `max`: 429 at the request points, `close` at `connection`; or the rule's `action:`.
 * 4. `scope: fleet` caps what is in progress across the fleet (lib/scope.ts, docs/fleet.md
 *    "Limits"); with `failMode: closed` and Redis out of reach it answers 503.
 */
import { z } from 'zod';
import type { PointContext, PolicyFactory, PolicyInstance, PolicyVerdict } from '../src/contracts/policy.ts';
import { makeAnswer } from '../src/policy/answer.ts';
import { checkKeyHeader, keyOf, keyOptions, keyPoint } from './lib/key.ts';
import { refusalOf } from './lib/refusal.ts';
import { checkScope, counterScope, scopeOptions, unavailableRefusal } from './lib/scope.ts';

const options = z
  .strictObject({
    ...keyOptions,
    ...scopeOptions,
    max: z.number().int().min(1),
  })
  .superRefine((o, ctx) => {
    checkKeyHeader(o, ctx);
    checkScope(o, ctx);
  });

type InFlightOptions = z.output<typeof options>;

const TOO_MANY = makeAnswer({ status: 429, body: 'too many requests in progress\n' });

/** The `in-flight` policy factory. */
export const inFlight = {
  name: 'in-flight',
  options,
  points: ['connection', 'request', 'routed'],
  refuses: true,
  needs: keyPoint,
  create(o: InFlightOptions, ctx): PolicyInstance {
    const counter = ctx.counters.concurrency(o.max, counterScope(o));
    const refusal = refusalOf(ctx.action, ctx.point, TOO_MANY);
    const unavailable = unavailableRefusal(ctx.action, ctx.point);
    const decide = (c: PointContext): PolicyVerdict => {
      const hold = counter.acquire(keyOf(o, c));
      if (hold !== undefined) return { action: 'pass', hold };
      return counter.unavailable === true ? unavailable : refusal;
    };
    return { connection: decide, request: decide, routed: decide };
  },
} satisfies PolicyFactory<InFlightOptions>;
