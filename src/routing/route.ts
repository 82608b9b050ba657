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
 *   book.findAddresses ─► publish switchboard:route:decided ─► undefined? ─► 404 no_route
 *      │
 *      ▼
 *   Candidates (product and cluster written into the access record) ─► the upstream pipeline
 *
 * The caller answers a refusal in its own protocol (src/data-path/answer.ts, or an HTTP/2 response). A
 * decided route returns the book's own Candidates object: nothing is allocated on that path.
 */
import type { Socket } from 'node:net';
import { channels } from '../base/diagnostics.ts';
import type { AccessRecord } from '../base/log.ts';
import type { ListenerConfig } from '../config/schema.ts';
import type { Candidates, Request } from '../contracts/types.ts';
import type { Engine } from '../panel/contract.ts';

/** A request the router answers itself instead of routing it. */
export interface RouteRefused {
  readonly refused: 'method_not_allowed' | 'no_route' | 'acme_challenge';
  readonly reason: string | undefined;
}

const NO_ROUTE: RouteRefused = Object.freeze({ refused: 'no_route', reason: undefined });

/** True when `decideRoute` refused the request. */
export function isRouteRefused(x: Candidates | RouteRefused): x is RouteRefused {
  return (x as RouteRefused).refused !== undefined;
}

/**
 * Decides where `request` may go with `engine`'s book, or why it may not. `socket` is the client
 * connection, when there is one, for subscribers of `switchboard:route:decided`.
 */
export function decideRoute(
  engine: Pick<Engine, 'book'> & { readonly tls?: Pick<Engine['tls'], 'issued'> },
  listener: Pick<ListenerConfig, 'name' | 'allowConnect'>,
  request: Request,
  record: AccessRecord,
  socket?: Socket,
): Candidates | RouteRefused {
  // HTTP-01: a pending challenge's token on a plaintext listener is answered before routing.
  const issued = engine.tls?.issued;
  if (issued !== undefined && !request.secure) {
    const keyAuthorization = issued.httpAnswer(request.path);
    if (keyAuthorization !== undefined) return { refused: 'acme_challenge', reason: keyAuthorization };
  }
  if (request.method === 'CONNECT' && request.protocol === 'http1' && !listener.allowConnect) {
    return { refused: 'method_not_allowed', reason: `CONNECT is not allowed on listener ${listener.name}` };
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
  return candidates;
}
