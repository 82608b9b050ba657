/**
 * The life of an exchange on a per-request connection (per-request.ts) after it was routed, and
 * what its link reports (the LinkOwner side of upstream-link.ts):
 *
 *   request forwarded (requestSent) ─┐
 *                                    ├─► complete: access line, link kept or released ─► next head │ close
 *   response forwarded (responseDone)┘
 *
 *   101 / CONNECT 2xx (tunnel) ─► splice the client and the link (src/data-path/splice.ts) until either ends
 *   link failed (broken) ─► nothing of the response went out: an idempotent request on a reused
 *                           link is sent once more on a new connection (retry), else answered 502
 *                           (`bad_response` for a response the router cannot frame, a 101 nobody
 *                           asked for included; `upstream_reset` for a lost link); part of it
 *                           went out: the exchange ends with why and the client is cut
 *
 * Events from a link that is no longer the current one (pooled, replaced) only remove it.
 */

import { splice } from '../../src/data-path/splice.ts';
import { releaseTracker } from '../../src/peek/body-tracker.ts';
import type { PerRequestDriver } from './per-request.ts';
import { resumeParsing } from './per-request-client.ts';
import { abort, close, finish, refuse } from './per-request-end.ts';
import { stopIdle } from './per-request-idle.ts';
import { retry, setLink } from './per-request-route.ts';
import type { LinkBreak, UpstreamLink } from './upstream-link.ts';

/** The request's last byte was written upstream. */
export function requestSent(d: PerRequestDriver): void {
  const ex = d.exchange!;
  ex.requestDone = true;
  const body = d.body;
  d.body = undefined;
  if (body !== undefined) releaseTracker(body);
  if (ex.responseDone) complete(d);
  else d.state = 'wait';
}

/** Both halves are forwarded: log, release a link the backend will close, go on or close. */
function complete(d: PerRequestDriver): void {
  const ex = d.exchange!;
  const link = d.link;
  d.exchange = undefined;
  d.replay = undefined;
  ex.record.bytesOut = link?.bytesOut ?? 0;
  ex.finish('ok');
  if (link !== undefined && !link.reusable) {
    setLink(d, undefined);
    link.socket.end();
  }
  if (ex.clientClose || link?.endsConnection === true || d.draining) close(d, 'ok');
  else d.state = 'head';
}

export function responseHead(d: PerRequestDriver, link: UpstreamLink, status: number): void {
  if (link !== d.link || d.exchange === undefined) return;
  if (status >= 200 || status === 101) d.exchange.record.status = status;
}

export function responseDone(d: PerRequestDriver, link: UpstreamLink): void {
  const ex = d.exchange;
  if (link !== d.link || ex === undefined) return;
  ex.responseDone = true;
  if (ex.requestDone) {
    complete(d);
    if (d.state === 'head') resumeParsing(d);
  } else if (!link.reusable) {
    // The backend answered early and will close: the rest of the request has nowhere to go.
    d.exchange = undefined;
    ex.record.bytesOut = link.bytesOut;
    ex.finish('ok');
    close(d, 'ok');
  }
}

export function tunnel(d: PerRequestDriver, link: UpstreamLink): void {
  const ex = d.exchange;
  if (link !== d.link || ex === undefined) return;
  d.state = 'tunnel';
  const c = d.client;
  c.removeListener('data', d.onData);
  c.removeListener('end', d.onEnd);
  stopIdle(d);
  setLink(d, undefined);
  d.pool.destroyAll();
  const pending = d.pending;
  d.pending = undefined;
  const read = c.bytesRead;
  const written = c.bytesWritten;
  splice(c, link.socket, pending, d.s.engine.limits.idleTimeout, (end, reason) => {
    ex.record.bytesIn += c.bytesRead - read + (pending?.length ?? 0);
    ex.record.bytesOut = link.bytesOut + c.bytesWritten - written;
    ex.finish(end, undefined, reason);
    d.result = end;
    if (reason !== undefined) d.s.connection.reason = reason;
    finish(d);
  });
}

export function broken(d: PerRequestDriver, link: UpstreamLink, why: LinkBreak, reason: string): void {
  d.pool.forget(link);
  if (link !== d.link || d.state === 'closing' || d.state === 'tunnel') return;
  setLink(d, undefined);
  const ex = d.exchange;
  if (ex === undefined) return;
  ex.record.bytesOut = link.bytesOut;
  const replay = d.replay;
  d.replay = undefined;
  if (link.bytesOut === 0) {
    // The reused link was closing as the request went out (its FIN not read yet): once more.
    if (replay !== undefined && ex.requestDone && (why === 'upstream_closed' || why === 'upstream_error')) {
      retry(d, replay);
      return;
    }
    // Nothing of the response reached the client, so no answer can interleave: it gets the
    // router's 502 instead of a bare close, then a close. An idle timeout keeps its close.
    if (why !== 'idle_timeout') {
      refuse(d, why === 'bad_response' ? 'bad_response' : 'upstream_reset', reason);
      return;
    }
  }
  d.exchange = undefined;
  ex.finish(why, undefined, reason);
  // Nothing of the response went out: a clean close. Part of it did: cut it, so it shows.
  if (link.bytesOut === 0) close(d, why);
  else abort(d, why);
}

export function closed(d: PerRequestDriver, link: UpstreamLink): void {
  d.pool.forget(link);
  if (link === d.link) setLink(d, undefined);
}
