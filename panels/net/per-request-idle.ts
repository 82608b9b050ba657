/**
 * The idle timeout of a per-request connection (`limits.idleTimeout`): one timer shared by all
 * connections with the same idleTimeout, instead of `socket.setTimeout` on the client and on
 * every upstream link, which re-armed a timer on every read and write of each socket and kept
 * two Timeouts per held connection (issue 18).
 *
 *   client read ─► d.activity++          link read, request bytes written ─► link.activity++
 *   every idleTimeout / IDLE_TICKS: tick ─┬─ client and current link quiet IDLE_TICKS ticks ─► onTimeout (abort, idle_timeout)
 *                                         ├─ current link quiet IDLE_TICKS ticks ─► link.onTimeout (busy: broken, else closed)
 *                                         └─ a pooled link quiet IDLE_TICKS ticks ─► closed
 *
 * 1. What counted as activity is what refreshed the sockets' timers: the client socket reads
 *    (its 'data') and writes (the current link's response bytes, counted as that link's reads);
 *    a link reads (its 'data') and writes (the request bytes the driver forwards) and drains.
 * 2. Like the splice's idle tick (src/data-path/splice.ts), a silent connection or link closes between
 *    idleTimeout and idleTimeout × (1 + 1 / IDLE_TICKS); a body that keeps moving is never cut.
 * 3. A connection leaves its ticker when it becomes a tunnel (the splice runs its own), times
 *    out, or has closed; the timer is unref'd (as socket timers are) and cleared when its last
 *    connection leaves.
 */
import { MemberList } from '../../src/base/member-list.ts';
import type { PerRequestDriver } from './per-request.ts';
import { failed, onTimeout } from './per-request-end.ts';
import type { UpstreamLink } from './upstream-link.ts';

/** Quiet ticks in a row that make a connection or a link idle. */
export const IDLE_TICKS = 4;

/** The connections whose idle timeout ticks with one period, and the one timer they share. */
export interface IdleTicker {
  readonly period: number;
  /** A list, not a Set (src/base/member-list.ts says why). */
  readonly members: MemberList<PerRequestDriver>;
  readonly timer: NodeJS.Timeout;
}

/** One ticker per tick period (idleTimeout / IDLE_TICKS): no Timeout per connection. */
const tickers = new Map<number, IdleTicker>();

/** Starts the connection's idle tick (nothing when idleTimeout is 0). */
export function startIdle(d: PerRequestDriver, idleTimeout: number): void {
  if (idleTimeout <= 0) return;
  const period = Math.max(1, Math.ceil(idleTimeout / IDLE_TICKS));
  let t = tickers.get(period);
  if (t === undefined) {
    t = { period, members: new MemberList(), timer: setTimeout(run, period, period) };
    t.timer.unref();
    tickers.set(period, t);
  }
  d.idleNode = t.members.add(d);
  d.idleTicker = t;
  // The shared timer's next tick may come at once: it sees this as traffic, so the quiet ticks
  // start after it (a silent connection closes after idleTimeout, never before).
  d.activity++;
}

/** Stops it (tunnel, close, timeout). */
export function stopIdle(d: PerRequestDriver): void {
  const t = d.idleTicker;
  if (t === undefined) return;
  d.idleTicker = undefined;
  if (d.idleNode !== undefined) t.members.remove(d.idleNode);
  d.idleNode = undefined;
  if (t.members.size === 0) {
    clearTimeout(t.timer);
    tickers.delete(t.period);
  }
}

function run(period: number): void {
  const t = tickers.get(period);
  if (t === undefined) return;
  // A copy: members that time out leave the list during the walk (one that left is skipped).
  for (const d of t.members.values()) {
    if (d.idleTicker !== t) continue;
    try {
      tick(d);
    } catch (err) {
      stopIdle(d);
      failed(d, err);
    }
  }
  if (tickers.get(period) === t && t.members.size > 0) t.timer.refresh();
}

/** True when `link` saw no traffic since the last tick; counts its quiet ticks. */
function quietLink(link: UpstreamLink): boolean {
  if (link.activity !== link.seen) {
    link.seen = link.activity;
    link.quiet = 0;
    return false;
  }
  link.quiet++;
  return true;
}

function tick(d: PerRequestDriver): void {
  const link = d.link;
  const linkQuiet = link === undefined || quietLink(link);
  if (d.activity !== d.seen || !linkQuiet) {
    d.seen = d.activity;
    d.quiet = 0;
  } else if (++d.quiet >= IDLE_TICKS) {
    stopIdle(d);
    onTimeout(d);
    return;
  }
  if (link !== undefined && link.quiet >= IDLE_TICKS) link.onTimeout();
  if (d.pool.size > 0) {
    // Closed after the walk: a close only takes the link out of the pool later ('close').
    const stale: UpstreamLink[] = [];
    for (const pooled of d.pool.values()) if (quietLink(pooled) && pooled.quiet >= IDLE_TICKS) stale.push(pooled);
    for (const l of stale) l.onTimeout();
  }
}
