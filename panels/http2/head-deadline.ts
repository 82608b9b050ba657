/**
 * `limits.peekTimeout` on the http2 panel: the first request of a connection (HTTP/1.1 head or
 * h2c/h2 HEADERS), sniffing included, must arrive within what is left of the deadline the
 * listener pipeline started at accept — the same promise the net panel's peek keeps.
 *
 *   accept ─► pipeline (PROXY, TLS) ─► arm(c) ─► sniff ─► server ─► first request ─► arrived(c)
 *                                        └────── remaining peekTimeout ──► expired(c) ─► 408 / close
 *
 * Later requests on a kept-alive connection are bounded by `idleTimeout`, as on the net panel.
 */

import { MemberList, type MemberNode } from '../../src/base/member-list.ts';
import type { Connection } from '../../src/listener/connection.ts';

/** A connection still waiting for its first request. */
interface Waiting {
  readonly c: Connection;
  readonly timer: NodeJS.Timeout;
  node: MemberNode<Waiting> | undefined;
}

/** Its deadline, in a slot of the connection (no Map that connections join and leave: src/base/member-list.ts). */
const kWaiting = Symbol('switchboard.http2.headDeadline');
type Slotted = Connection & { [kWaiting]?: Waiting | undefined };

/** The connections still waiting for their first request, with their timers. */
export class HeadDeadlines {
  readonly #waiting = new MemberList<Waiting>();
  readonly #expired: (c: Connection) => void;

  constructor(expired: (c: Connection) => void) {
    this.#expired = expired;
  }

  /** Starts the deadline of `c` (what is left of its peekTimeout). */
  arm(c: Connection): void {
    const w: Waiting = { c, timer: setTimeout(expire, c.remaining(), this, c), node: undefined };
    w.node = this.#waiting.add(w);
    (c as Slotted)[kWaiting] = w;
  }

  /**
   * The first request of `c` arrived, or it was answered, or the connection ended: no deadline
   * any more. True when `c` was still waiting (nothing had arrived, expired or been answered).
   */
  arrived(c: Connection | undefined): boolean {
    if (c === undefined) return false;
    const w = (c as Slotted)[kWaiting];
    if (w === undefined) return false;
    clearTimeout(w.timer);
    this.#forget(w);
    return true;
  }

  /** The deadline of `c` passed. */
  expire(c: Connection): void {
    const w = (c as Slotted)[kWaiting];
    if (w === undefined) return;
    this.#forget(w);
    this.#expired(c);
  }

  #forget(w: Waiting): void {
    (w.c as Slotted)[kWaiting] = undefined;
    if (w.node !== undefined) this.#waiting.remove(w.node);
    w.node = undefined;
  }

  /** Clears every timer (panel destroyed). */
  clear(): void {
    for (const w of this.#waiting.values()) {
      clearTimeout(w.timer);
      (w.c as Slotted)[kWaiting] = undefined;
    }
    this.#waiting.clear();
  }
}

function expire(deadlines: HeadDeadlines, c: Connection): void {
  deadlines.expire(c);
}
