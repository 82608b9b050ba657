/**
 * A per-request head's route, decided before a byte of it goes upstream: the body bytes in hand
 * framed (a body that cannot be framed is refused with its head), `decideRoute`
 * (src/routing/route.ts, the request and routed policies included) and the first pick
 * (`pickFirst`), which names the backend and hence the link. The driver binds the request to that link or opens one (per-request-driver.ts).
 */
import type { Socket } from 'node:net';
import { isSwitchboardError, type ResultCode } from '../../src/base/errors.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import { type Candidates, isRefusal, type Jack, type Request } from '../../src/contracts/types.ts';
import { type BodyTracker, takeTracker } from '../../src/peek/body-tracker.ts';
import type { Http1Head } from '../../src/peek/http1.ts';
import type { PolicyOutcome } from '../../src/policy/outcome.ts';
import { decideRoute, isPolicyFired, isRouteRefused, type PolicyHolder } from '../../src/routing/route.ts';
import { pickFirst } from '../../src/upstream/index.ts';
import type { PerRequestStart } from './per-request-start.ts';

/** A routed head: where its request may go, and its body's framing. */
export interface RoutedHead {
  readonly refused?: undefined;
  readonly candidates: Candidates;
  /** The first pick: the upstream pipeline starts with it. */
  readonly first: Jack;
  /** Given back when the body is done (per-request-framing.ts). */
  readonly body: BodyTracker;
  /** The bytes of the view that belong to the request (head + body in hand). */
  readonly consumed: number;
}

/**
 * A head a `policies:` rule fired on (the exchange's record names it already): `read`, the
 * bytes of the view that belong to it (head + body in hand); `bodyDone`, its body is all in
 * hand, so the connection can go on after an answer.
 */
export interface PolicyHead {
  readonly refused: 'policy';
  readonly fired: PolicyOutcome;
  readonly read: number;
  readonly bodyDone: boolean;
}

/** A refused head: answered with `refused`; `read`: the bytes read for it, counted in bytesIn. */
export interface RefusedHead {
  readonly refused: ResultCode;
  readonly reason: string | undefined;
  readonly read: number;
}

/**
 * Routes `request`, of the complete `head` at offset 0 of `view`, into `record` (its exchange's,
 * `holder` keeping the slots of the rules that let it through); a refused head's body tracker is
 * dropped.
 */
export function routeHead(
  start: PerRequestStart,
  client: Socket,
  head: Http1Head,
  view: Buffer,
  request: Request,
  record: AccessRecord,
  holder: PolicyHolder,
): RoutedHead | RefusedHead | PolicyHead {
  const body = takeTracker(head.bodyFraming);
  let fed: number;
  try {
    fed = body.feed(view, head.headLength);
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    return { refused: 'bad_request', reason: e.message, read: view.length }; // a body that cannot be framed: all of it read
  }
  // A refused request counts the bytes read for it (head and body in hand) in bytesIn.
  const consumed = head.headLength + fed;
  const candidates = decideRoute(start.engine, start.listener, request, record, client, holder);
  if (isRouteRefused(candidates)) {
    if (isPolicyFired(candidates))
      return { refused: 'policy', fired: candidates.fired, read: consumed, bodyDone: body.done };
    return { refused: candidates.refused, reason: candidates.reason, read: consumed };
  }
  const first = pickFirst(request, candidates, start.engine.operator);
  if (isRefusal(first)) return { refused: first.refused, reason: `operator refused: ${first.refused}`, read: consumed };
  return { candidates, first, body, consumed };
}
