/**
 * Routing one head of a per-request connection (per-request.ts) and binding it to a link:
 *
 *   head ─► Request ─► Exchange ─► body bytes in hand framed ─► decideRoute (src/routing/route.ts)
 *        ─► findJack (first attempt) ─► current link │ pooled link │ openUpstreamThen ─► connected
 *
 * 1. Everything that can refuse the request (its Request, the body bytes in hand, CONNECT,
 *    no route, the operator) is decided before a byte goes upstream.
 * 2. The first pick names the backend, hence the link: the current link when it serves that
 *    key, else an idle pooled one (the current one is parked; the least recently used idle link
 *    beyond `limits.maxIdleUpstreamsPerConnection` is closed), else a new connection through the
 *    upstream pipeline, which starts with that pick and retries per the cluster policy.
 * 3. While connecting the client is read into `pending`; `connected` frames it once the link is
 *    there, and passes on a FIN the client sent meanwhile if its body is still in flight. A connect that ends after the connection closed destroys its socket. A request the
 *    outbound PROXY header cannot carry (src/upstream/proxy-out.ts) comes back as a refusal, answered
 *    like a failed connect (431 for an AUTHORITY longer than a host name).
 * 4. A reused link may be closing when a request goes out on it (the backend's response and FIN
 *    came in one read, the FIN not handled yet). A request whose bytes were all in hand when it
 *    was routed onto a reused link, with an idempotent method, keeps a copy of them (`Replay`):
 *    if the link fails before any response byte, `retry` sends it once on a new connection
 *    (HAProxy's retry-on empty-response, conn-failure); any other request is answered 502.
 */
import { isSwitchboardError } from '../../src/base/errors.ts';
import { type Candidates, isRefusal, type Request } from '../../src/contracts/types.ts';
import { takeTracker } from '../../src/peek/body-tracker.ts';
import type { Http1Head } from '../../src/peek/http1.ts';
import { decideRoute, isRouteRefused } from '../../src/routing/route.ts';
import {
  isUpstreamFailure,
  openUpstreamThen,
  pickFirst,
  type Upstream,
  type UpstreamFailure,
} from '../../src/upstream/index.ts';
import { Exchange } from './exchange.ts';
import type { PerRequestDriver, State } from './per-request.ts';
import { flow, frame } from './per-request-client.ts';
import { failed, refuse, requestLog } from './per-request-end.ts';
import { linkKey, UpstreamLink } from './upstream-link.ts';

/** Methods a request may be sent again for (RFC 9110 §9.2.2 idempotent methods). */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']);

/** A request sent on a reused link, kept whole so that it can go once more on a new connection. */
export interface Replay {
  readonly bytes: Buffer;
  readonly request: Request;
  readonly candidates: Candidates;
}

/**
 * Routes one complete head at offset 0 of `view`. Returns the bytes of `view` that now belong
 * to the request on the current link (head + body in hand), or -1 when it was refused or
 * waits for a connect (which resumes on its own).
 */
export function route(d: PerRequestDriver, head: Http1Head, view: Buffer, given?: Request): number {
  const s = d.s;
  let request: Request;
  try {
    request = given ?? s.requestFor(head);
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    refuse(d, 'bad_request', e.message, head.headLength);
    return -1;
  }
  const ex = new Exchange(s.listener.name, clientOf(d, request), requestLog(d), head, request);
  d.exchange = ex;
  // Given back when the body is done (per-request-exchange.ts requestSent); a refused head's is dropped.
  const body = takeTracker(head.bodyFraming);
  let fed: number;
  try {
    fed = body.feed(view, head.headLength);
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    refuse(d, 'bad_request', e.message, view.length); // a body that cannot be framed: all of it read
    return -1;
  }
  // A refused request counts the bytes read for it (head and body in hand) in bytesIn.
  const consumed = head.headLength + fed;
  const candidates = decideRoute(s.engine, s.listener, request, ex.record, d.client);
  if (isRouteRefused(candidates)) {
    refuse(d, candidates.refused, candidates.reason, consumed);
    return -1;
  }
  const pick = pickFirst(request, candidates, s.engine.operator);
  if (isRefusal(pick)) {
    refuse(d, pick.refused, `operator refused: ${pick.refused}`, consumed);
    return -1;
  }
  d.body = body;
  const link = linkFor(d, linkKey(pick.backend.id, candidates.policy, request));
  if (link !== undefined) {
    // A copy: the bytes of `view` may be a read buffer reused once framed.
    d.replay =
      body.done && IDEMPOTENT.has(head.method)
        ? { bytes: Buffer.from(view.subarray(0, consumed)), request, candidates }
        : undefined;
    start(d, link, undefined);
    return consumed;
  }
  d.replay = undefined;
  d.state = 'connecting';
  const { engine } = s;
  // Callbacks, no promise (issue 18: nothing async on the accept → connect path). One catch for
  // the pipeline's bug report and for `connected`: a throw in either (a broken invariant) closes
  // this connection and the socket that was opened for it; it never reaches the socket's handler.
  openUpstreamThen(
    request,
    candidates,
    engine.operator,
    s.runtime,
    engine,
    'frames',
    (err, up) => {
      try {
        if (err !== undefined || up === undefined) throw err ?? new Error('openUpstream settled without an outcome');
        connected(d, up, request, candidates, view, consumed);
      } catch (e) {
        if (up !== undefined && !isUpstreamFailure(up)) up.socket.destroy();
        failed(d, e);
      }
    },
    pick,
  );
  return -1;
}

/**
 * The access record's client of `request` (`ip:port`): the string of the connection's previous
 * request when the address is the same (it is, unless a forwarded header names another client),
 * so a keep-alive connection builds it once.
 */
function clientOf(d: PerRequestDriver, request: Request): string {
  if (d.clientAddr === undefined || request.clientIp !== d.clientIp || request.clientPort !== d.clientPort) {
    d.clientIp = request.clientIp;
    d.clientPort = request.clientPort;
    d.clientAddr = `${request.clientIp}:${request.clientPort}`;
  }
  return d.clientAddr;
}

/**
 * The current link if it serves `key`, else a pooled one; the current one is parked (LRU, at
 * most `limits.maxIdleUpstreamsPerConnection` idle) after the pooled one was taken out, so
 * parking never evicts the link about to be reused.
 */
function linkFor(d: PerRequestDriver, key: string): UpstreamLink | undefined {
  const cur = d.link;
  if (cur !== undefined && cur.key === key && cur.reusable && !cur.socket.destroyed) return cur;
  const pooled = d.pool.take(key);
  if (cur !== undefined) {
    setLink(d, undefined);
    if (cur.reusable && !cur.socket.destroyed) d.pool.put(cur, d.s.engine.limits.maxIdleUpstreamsPerConnection);
    else cur.destroy();
  }
  if (pooled !== undefined) setLink(d, pooled);
  return pooled;
}

/** Makes `link` the current one; a wait for the old one's 'drain' is dropped. */
export function setLink(d: PerRequestDriver, link: UpstreamLink | undefined): void {
  if (d.upBlocked) {
    d.link?.socket.removeListener('drain', d.onUpDrain);
    d.upBlocked = false;
  }
  d.link = link;
}

/** Binds the routed exchange to `link`; the request's bytes follow. */
function start(d: PerRequestDriver, link: UpstreamLink, attempts: number | undefined): void {
  const ex = d.exchange!;
  ex.record.backend = link.jack.backend.id;
  if (attempts !== undefined) ex.record.attempts = attempts;
  if (d.first) {
    d.first = false;
    const c = d.s.connection;
    c.backend = ex.record.backend;
    if (ex.record.product !== undefined) c.product = ex.record.product;
    if (ex.record.cluster !== undefined) c.cluster = ex.record.cluster;
    if (attempts !== undefined) c.attempts = attempts;
  }
  link.expect(ex.method, ex.upgradeTo);
  d.state = 'body';
}

/** The upstream pipeline is done: a new link for the exchange, or its refusal. */
function connected(
  d: PerRequestDriver,
  up: Upstream | UpstreamFailure,
  request: Request,
  candidates: Candidates,
  view: Buffer,
  consumed: number,
): void {
  if (d.state !== 'connecting') {
    if (!isUpstreamFailure(up)) up.socket.destroy();
    return;
  }
  d.exchange!.record.attempts = up.attempts;
  if (d.first) d.s.connection.attempts = up.attempts;
  if (isUpstreamFailure(up)) {
    refuse(d, up.result, up.reason, consumed);
    return;
  }
  const link = new UpstreamLink(up.socket, up.jack, candidates, request, d.settings, d);
  setLink(d, link);
  start(d, link, up.attempts);
  const pending = d.pending;
  d.pending = undefined;
  const buf = pending === undefined ? view : Buffer.concat([view, pending]);
  frame(d, buf, consumed, 0);
  // A client FIN that came while connecting, in the middle of a body: passed on now, as
  // per-request-client.ts onEnd does once a link is there (the backend may read to the end).
  // (`frame` moved the state on: TypeScript still holds it at the `connecting` checked above.)
  if (d.clientEnded && (d.state as State) === 'body') d.link?.socket.end();
  flow(d);
}

/**
 * The reused link of a request in `replay` failed before any response byte: the request goes
 * once more, on a new connection (the upstream pipeline: findJack, connect, retries). The
 * client's next bytes wait in `pending` meanwhile, as during any connect.
 */
export function retry(d: PerRequestDriver, replay: Replay): void {
  d.replay = undefined;
  d.state = 'connecting';
  const { engine } = d.s;
  openUpstreamThen(replay.request, replay.candidates, engine.operator, d.s.runtime, engine, 'frames', (err, up) => {
    try {
      if (err !== undefined || up === undefined) throw err ?? new Error('openUpstream settled without an outcome');
      reconnected(d, up, replay);
    } catch (e) {
      if (up !== undefined && !isUpstreamFailure(up)) up.socket.destroy();
      failed(d, e);
    }
  });
}

/** The retry's connection is up (or refused): the kept request is written, its response awaited. */
function reconnected(d: PerRequestDriver, up: Upstream | UpstreamFailure, replay: Replay): void {
  if (d.state !== 'connecting') {
    if (!isUpstreamFailure(up)) up.socket.destroy();
    return;
  }
  const ex = d.exchange!;
  ex.record.attempts = (ex.record.attempts ?? 1) + up.attempts;
  if (isUpstreamFailure(up)) {
    refuse(d, up.result, up.reason);
    return;
  }
  const link = new UpstreamLink(up.socket, up.jack, replay.candidates, replay.request, d.settings, d);
  setLink(d, link);
  start(d, link, ex.record.attempts);
  link.activity++;
  link.socket.write(replay.bytes);
  d.state = 'wait'; // the whole request is written (requestSent ran for it before)
  flow(d);
}
