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
import type { Connection } from '../../src/listener/connection.ts';

/** The connections still waiting for their first request, with their timers. */
export class HeadDeadlines {
  readonly #timers = new Map<Connection, NodeJS.Timeout>();
  readonly #expired: (c: Connection) => void;

  constructor(expired: (c: Connection) => void) {
    this.#expired = expired;
  }

  /** Starts the deadline of `c` (what is left of its peekTimeout). */
  arm(c: Connection): void {
    const timer = setTimeout(() => {
      this.#timers.delete(c);
      this.#expired(c);
    }, c.remaining());
    this.#timers.set(c, timer);
  }

  /**
   * The first request of `c` arrived, or it was answered, or the connection ended: no deadline
   * any more. True when `c` was still waiting (nothing had arrived, expired or been answered).
   */
  arrived(c: Connection | undefined): boolean {
    if (c === undefined) return false;
    const timer = this.#timers.get(c);
    if (timer === undefined) return false;
    clearTimeout(timer);
    this.#timers.delete(c);
    return true;
  }

  /** Clears every timer (panel destroyed). */
  clear(): void {
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
  }
}
