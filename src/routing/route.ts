/**
 * The routing decision, the same for every panel and routing mode (per-connection, per-request,
 * each stream of the http2 panel), made before anything is written to a backend:
 *
 *   Request ─► HTTP-01 token of a pending ACME challenge (plaintext)? ─► 200 key authorization
 *      │
 *      ▼
 *   CONNECT (HTTP/1) on a listener without allowConnect? ─► 405 method_not_allowed
 *      │
 *      ▼
 *   policies at `request` (BFE HandleBeforeLocation) ─► close | answer? ─► RoutePolicyFired
 *      │
 *      ▼
 *   book.findAddresses ─► publish switchboard:route:decided ─► undefined? ─► 404 no_route
 *      │
 *      ▼
 *   policies at `routed` (product, cluster known) ─► close | answer? ─► RoutePolicyFired
 *      │
 *      ▼
 *   Candidates (product and cluster written into the access record) ─► the upstream pipeline
 *
 * 1. The caller answers a refusal in its own protocol (src/data-path/answer.ts, or an HTTP/2
 *    response); a policy's verdict too (src/data-path/policy-answer.ts, or the stream's own).
 * 2. An ACME HTTP-01 token is answered before any policy: a redirect to HTTPS or a block must
 *    not fail the validation of the router's own certificate (Caddy does the same).
 * 3. A rule that fired is written into the record (`policy`, `action`, `result`
 *    `policy_closed` / `policy_answered`), the same on every panel. Slots that the rules that
 *    let the request through took (in-flight) are joined into `holder.policyHold`: the caller
 *    releases it when the request or stream ends, on every end path.
 * 4. A decided route returns the book's own Candidates object; with no rule at either point
 *    nothing is allocated on that path (one length check per point).
 */
import type { Socket } from 'node:net';
import { channels } from '../base/diagnostics.ts';
import type { AccessRecord } from '../base/log.ts';
import type { ListenerConfig } from '../config/schema.ts';
import type { Hold } from '../contracts/policy.ts';
import type { Candidates, Request } from '../contracts/types.ts';
import type { Engine } from '../panel/contract.ts';
import { joinHolds, type PolicyOutcome } from '../policy/outcome.ts';
import type { PolicySet } from '../policy/policy-set.ts';

/** A request the router answers itself instead of routing it. */
export interface RouteRefused {
  readonly refused: 'method_not_allowed' | 'no_route' | 'acme_challenge';
  readonly reason: string | undefined;
}

/** A `policies:` rule closed the request or answers it (`fired.verdict` says which, and how). */
export interface RoutePolicyFired {
  readonly refused: 'policy';
  /** The outcome: the rule's name, its policy, the verdict (`close`, or `answer` with the answer). */
  readonly fired: PolicyOutcome;
}

/** Where the slots of the rules that let a request through are kept until it ends. */
export interface PolicyHolder {
  policyHold: Hold | undefined;
}

const NO_ROUTE: RouteRefused = Object.freeze({ refused: 'no_route', reason: undefined });

/** True when `decideRoute` refused the request (the router's own refusal or a policy's). */
export function isRouteRefused(x: Candidates | RouteRefused | RoutePolicyFired): x is RouteRefused | RoutePolicyFired {
  return (x as RouteRefused).refused !== undefined;
}

/** True when a policy rule fired rather than the router refusing. */
export function isPolicyFired(x: RouteRefused | RoutePolicyFired): x is RoutePolicyFired {
  return x.refused === 'policy';
}

/**
 * Decides where `request` may go with `engine`'s book and rules, or why it may not. `holder`
 * keeps the slots of rules that let it through (undefined: the engine has no policies, as in
 * tests of the decision alone); `socket` is the client connection, when there is one, for
 * subscribers of `switchboard:route:decided`.
 */
export function decideRoute(
  engine: Pick<Engine, 'book'> & {
    readonly tls?: Pick<Engine['tls'], 'issued'>;
    readonly policies?: PolicySet;
  },
  listener: Pick<ListenerConfig, 'name' | 'allowConnect'>,
  request: Request,
  record: AccessRecord,
  socket?: Socket,
  holder?: PolicyHolder,
): Candidates | RouteRefused | RoutePolicyFired {
  // HTTP-01: a pending challenge's token on a plaintext listener is answered before routing.
  const issued = engine.tls?.issued;
  if (issued !== undefined && !request.secure) {
    const keyAuthorization = issued.httpAnswer(request.path);
    if (keyAuthorization !== undefined) return { refused: 'acme_challenge', reason: keyAuthorization };
  }
  if (request.method === 'CONNECT' && request.protocol === 'http1' && !listener.allowConnect) {
    return { refused: 'method_not_allowed', reason: `CONNECT is not allowed on listener ${listener.name}` };
  }
  // TLS passthrough has no request: its points are connection and handshake (the panel's).
  const policies = request.protocol === 'tls' ? undefined : engine.policies;
  if (holder !== undefined && policies?.has('request') === true) {
    const outcome = policies.request({ connection: request, request });
    if (outcome.verdict.action !== 'pass') return fired(outcome, record);
    holder.policyHold = joinHolds(holder.policyHold, outcome);
  }
  const candidates = engine.book.findAddresses(request);
  if (channels.routeDecided.hasSubscribers) {
    const listenerName = listener.name;
    channels.routeDecided.publish(
      socket === undefined
        ? { request, candidates, listener: listenerName }
        : { request, candidates, listener: listenerName, socket },
    );
  }
  if (candidates === undefined) return NO_ROUTE;
  record.product = candidates.product;
  record.cluster = candidates.cluster;
  if (holder !== undefined && policies?.has('routed') === true) {
    const { product, cluster } = candidates;
    const outcome = policies.routed({ connection: request, request, product, cluster });
    if (outcome.verdict.action !== 'pass') return fired(outcome, record);
    holder.policyHold = joinHolds(holder.policyHold, outcome);
  }
  return candidates;
}

/** A rule fired: its name and action in the record, and the outcome for the caller to carry out. */
function fired(outcome: PolicyOutcome, record: AccessRecord): RoutePolicyFired {
  const action = outcome.verdict.action;
  record.policy = outcome.rule ?? '';
  record.action = action;
  if (action === 'answer') record.status = outcome.verdict.answer.status;
  return { refused: 'policy', fired: outcome };
}
