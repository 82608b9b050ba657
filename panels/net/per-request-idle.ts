/**
 * The idle timeout of a per-request connection (`limits.idleTimeout`): one timer per client
 * connection instead of `socket.setTimeout` on the client and on every upstream link, which
 * re-armed a timer on every read and write of each socket (issue 18).
 *
 *   client read ─► d.activity++          link read, request bytes written ─► link.activity++
 *   every idleTimeout / IDLE_TICKS: tick ─┬─ client and current link quiet IDLE_TICKS ticks ─► onTimeout (abort, idle_timeout)
 *                                         ├─ current link quiet IDLE_TICKS ticks ─► link.onTimeout (busy: broken, else closed)
 *                                         └─ a pooled link quiet IDLE_TICKS ticks ─► closed
 *
 * 1. What counted as activity is what refreshed the sockets' timers: the client socket reads
 *    (its 'data') and writes (the current link's response bytes, counted as that link's reads);
 *    a link reads (its 'data') and writes (the request bytes the driver forwards) and drains.
 * 2. Like the splice's idle tick (src/splice.ts), a silent connection or link closes between
 *    idleTimeout and idleTimeout × (1 + 1 / IDLE_TICKS); a body that keeps moving is never cut.
 * 3. The timer is unref'd (as socket timers are), stopped when the connection becomes a tunnel
 *    (the splice runs its own) and when it has closed.
 */
import type { PerRequestDriver } from './per-request.ts';
import { failed, onTimeout } from './per-request-end.ts';
import type { UpstreamLink } from './upstream-link.ts';

/** Quiet ticks in a row that make a connection or a link idle. */
export const IDLE_TICKS = 4;

/** Starts the connection's idle tick (nothing when idleTimeout is 0). */
export function startIdle(d: PerRequestDriver, idleTimeout: number): void {
  if (idleTimeout <= 0) return;
  d.idleTimer = setTimeout(tick, Math.max(1, Math.ceil(idleTimeout / IDLE_TICKS)), d);
  d.idleTimer.unref();
}

/** Stops it (tunnel, close). */
export function stopIdle(d: PerRequestDriver): void {
  if (d.idleTimer === undefined) return;
  clearTimeout(d.idleTimer);
  d.idleTimer = undefined;
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
  try {
    const link = d.link;
    const linkQuiet = link === undefined || quietLink(link);
    if (d.activity !== d.seen || !linkQuiet) {
      d.seen = d.activity;
      d.quiet = 0;
    } else if (++d.quiet >= IDLE_TICKS) {
      d.idleTimer = undefined;
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
    d.idleTimer?.refresh();
  } catch (err) {
    failed(d, err);
  }
}
