/**
 * The idle timeout of a per-request connection (`limits.idleTimeout`): one timer shared by all
 * connections with the same idleTimeout, instead of `socket.setTimeout` on the client and on
 * every upstream link, which re-armed a timer on every read and write of each socket and kept
 * two Timeouts per held connection (issue 18).
 *
 *   client read ─► driver traffic.count++      link read, request bytes written ─► link.traffic.count++
 *   every idleTimeout / IDLE_TICKS: ticker ─► member.idleTick() (per-request-driver.ts):
 *     ├─ client and current link quiet IDLE_TICKS ticks ─► the connection times out (idle_timeout)
 *     ├─ current link quiet IDLE_TICKS ticks ─► link.onTimeout (busy: broken, else closed)
 *     └─ a pooled link quiet IDLE_TICKS ticks ─► closed
 *
 * 1. What counted as activity is what refreshed the sockets' timers: the client socket reads
 *    (its 'data') and writes (the current link's response bytes, counted as that link's reads);
 *    a link reads (its 'data') and writes (the request bytes the driver forwards) and drains.
 * 2. Like the splice's idle tick (src/data-path/splice.ts), a silent connection or link closes between
 *    idleTimeout and idleTimeout × (1 + 1 / IDLE_TICKS); a body that keeps moving is never cut.
 * 3. A connection leaves its ticker when it becomes a tunnel (the splice runs its own), times
 *    out, or has closed; the timer is unref'd (as socket timers are) and cleared when its last
 *    connection leaves.
 *
 * This file knows nothing of the driver: a member is anything with `idleTick()`.
 */
import { MemberList, type MemberNode } from '../../src/base/member-list.ts';

/** Quiet ticks in a row that make a connection or a link idle. */
export const IDLE_TICKS = 4;

/** What a ticker ticks: the driver of one connection. */
export interface IdleMember {
  /** One tick of the shared timer; what it throws is the member's to handle. */
  idleTick(): void;
}

/** The traffic count of one socket and the idle tick's view of it. */
export class Traffic {
  /** Bumped on every read, write or drain that counts as traffic. */
  count = 0;
  #seenCount = 0;
  #quietTicks = 0;

  /**
   * One tick: true (and one more quiet tick) when nothing moved since the last one and
   * `quietElsewhere` (what else must be quiet too: the connection's current link); else the
   * quiet ticks start again.
   */
  tick(quietElsewhere = true): boolean {
    if (this.count !== this.#seenCount || !quietElsewhere) {
      this.#seenCount = this.count;
      this.#quietTicks = 0;
      return false;
    }
    this.#quietTicks++;
    return true;
  }

  /** Quiet for IDLE_TICKS ticks in a row. */
  get idle(): boolean {
    return this.#quietTicks >= IDLE_TICKS;
  }
}

/** The connections whose idle timeout ticks with one period, and the one timer they share. */
export interface IdleTicker {
  readonly period: number;
  /** A list, not a Set (src/base/member-list.ts says why). */
  readonly members: MemberList<IdleMember>;
  readonly timer: NodeJS.Timeout;
}

/** One ticker per tick period (idleTimeout / IDLE_TICKS): no Timeout per connection. */
const tickers = new Map<number, IdleTicker>();

/** The ticker for `idleTimeout`, made on first use; undefined when idleTimeout is 0 (no timeout). */
export function idleTickerFor(idleTimeout: number): IdleTicker | undefined {
  if (idleTimeout <= 0) return undefined;
  const period = Math.max(1, Math.ceil(idleTimeout / IDLE_TICKS));
  let t = tickers.get(period);
  if (t === undefined) {
    t = { period, members: new MemberList(), timer: setTimeout(run, period, period) };
    t.timer.unref();
    tickers.set(period, t);
  }
  return t;
}

/** Takes the member of `node` out of `ticker`; the last one out clears the timer. */
export function leaveTicker(ticker: IdleTicker, node: MemberNode<IdleMember>): void {
  ticker.members.remove(node);
  if (ticker.members.size === 0) {
    clearTimeout(ticker.timer);
    tickers.delete(ticker.period);
  }
}

/**
 * A member's seat at the ticker of its idleTimeout (none when idleTimeout is 0): taken once,
 * left once (a tunnel, a close, a timeout).
 */
export class IdleSeat {
  #ticker: IdleTicker | undefined;
  #node: MemberNode<IdleMember> | undefined;

  /** Seats `member` at the ticker of `idleTimeout`; false when there is none (no timeout). */
  take(member: IdleMember, idleTimeout: number): boolean {
    const ticker = idleTickerFor(idleTimeout);
    if (ticker === undefined) return false;
    this.#ticker = ticker;
    this.#node = ticker.members.add(member);
    return true;
  }

  /** The member still ticks (it has a seat and did not leave it). */
  get taken(): boolean {
    return this.#ticker !== undefined;
  }

  /** Leaves the ticker (again: nothing). */
  leave(): void {
    const ticker = this.#ticker;
    if (ticker === undefined) return;
    this.#ticker = undefined;
    if (this.#node !== undefined) leaveTicker(ticker, this.#node);
    this.#node = undefined;
  }
}

function run(period: number): void {
  const t = tickers.get(period);
  if (t === undefined) return;
  // A copy: members that time out leave the list during the walk (one that left ignores the tick).
  for (const member of t.members.values()) member.idleTick();
  if (tickers.get(period) === t && t.members.size > 0) t.timer.refresh();
}
