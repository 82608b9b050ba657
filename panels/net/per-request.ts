/**
 * Per-request routing on an HTTP/1 keep-alive connection (`routing: per-request`): every request
 * is routed on its own while the bytes pass through unmodified.
 *
 *   client ──► head (Http1HeadScanner) ─► route ─► body (BodyTracker) ─► wait for the response ─┐
 *               ▲     decideRoute + findJack:                                                    │
 *               │       current link │ pooled link │ new connection (retries)                    │
 *               └──────────────────── exchange complete (request and response forwarded) ◄──────┘
 *
 * 1. One exchange at a time: after a request has been forwarded, what the client sends next is
 *    held (at most maxHeaderBytes, then the client is paused) until the response is complete,
 *    so pipelined requests are answered in order and every request can go to another backend
 *    without two responses ever interleaving.
 * 2. A head is validated (hazard rows 1–13, and no `Upgrade: h2c`), then the body bytes already
 *    in hand are framed before anything is written, so a request refused for its head or for a
 *    chunk size in the same read never reaches a backend (answered 400, then closed). A body
 *    error in bytes read later, after the head went upstream, destroys the upstream connection
 *    (the backend sees a truncated request and nothing after it) and answers 400, or cuts the
 *    client when part of the response already went out.
 * 3. The chosen backend's link is the current one, an idle one this client used before
 *    (UpstreamPool), or a new connection with the cluster's PROXY header and retries.
 * 4. The router's own answers (404, 405, 502…) go out once the previous response is complete;
 *    they carry `Connection: close` and the connection closes.
 * 5. 101 to a request that offered that protocol in Upgrade, or a 2xx to CONNECT, makes the
 *    connection an opaque tunnel (src/data-path/splice.ts); bytes the client sent after such a request
 *    wait until the response decides what they are. A response the router cannot frame, a 101
 *    to any other request included, is answered 502 `bad_response` while none of it went out
 *    (else the client is cut); either way the connection closes.
 * 6. A close-delimited response, a client `Connection: close`, or a client FIN end the
 *    connection after the exchange; a backend that closes is replaced for the next request.
 * 7. A link that fails before any byte of its response went out: an idempotent request that
 *    went on a reused link is resent once on a new connection (the backend may have closed it
 *    as the request left; per-request-resend.ts); otherwise the client gets 502
 *    `upstream_reset`, never a bare FIN.
 *
 * One `PerRequestDriver` per connection owns the state (private) and sequences the steps (its
 * methods, calling the parts below it); the files import downwards only:
 *
 *   per-request.ts           this entry: runPerRequest
 *   per-request-driver.ts    the driver: the state and the sequencing of the steps below
 *   per-request-steps.ts     types only: the driver's state and what the framing asks of it
 *   per-request-framing.ts   heads and bodies framed, forwarded or kept (RequestFramer)
 *   per-request-route.ts     a head's route and first pick, or its refusal (routeHead)
 *   per-request-tunnel.ts    a 101 or CONNECT 2xx spliced (spliceTunnel)
 *   per-request-start.ts     what the panel hands over (PerRequestStart, the connection's record)
 *   per-request-client-events.ts   the client socket's shared listeners (ClientListener)
 *   per-request-pending.ts   the client bytes not framed yet (PendingBytes)
 *   per-request-in-flight.ts the exchange in flight and its record's bookkeeping (ExchangeInFlight)
 *   per-request-records.ts   each exchange's record, and the connection's (ExchangeRecords)
 *   per-request-connect.ts   a new link through the upstream pipeline (openLink)
 *   per-request-end.ts       the result, answer, close and line of a connection (ConnectionEnd)
 *   per-request-links.ts     the current upstream link and the idle ones (ClientLinks)
 *   per-request-resend.ts    which request may be sent once more on a new link, and its copy
 *   per-request-idle.ts      the shared idle ticker and each socket's Traffic count
 *   exchange.ts, upstream-link.ts, upstream-pool.ts   an exchange's record, a link, the idle links
 */
import type { Request } from '../../src/contracts/types.ts';
import type { Http1Head } from '../../src/peek/http1.ts';
import { PerRequestDriver } from './per-request-driver.ts';
import type { PerRequestStart } from './per-request-start.ts';

export { type PerRequestStart, perRequestStart } from './per-request-start.ts';

/**
 * Runs a client connection in per-request mode until it closes, starting with the peeked first
 * `head` and its `request`; `buffer` holds the head at offset 0 and whatever followed it (none
 * of the three is kept once routed: an idle connection holds no head).
 */
export function runPerRequest(start: PerRequestStart, head: Http1Head, buffer: Buffer, request: Request): void {
  new PerRequestDriver(start).begin(head, buffer, request);
}
