/**
 * Graceful drain, as a tiny interface between the panel and connection drivers:
 *
 * 1. A connection driver that can stop at a clean boundary (the per-request HTTP/1 driver, after
 *    the current response) registers a `Drainable` with `runtime.drain.register(d)` and calls
 *    the returned function when the connection ends.
 * 2. On shutdown the panel calls `drainAll()`: every registered connection is asked to close at
 *    its next boundary; connections registered later are asked at once (`draining` is set).
 * 3. Connections that cannot stop early (blind tunnels) are not registered; they get until
 *    `limits.drainTimeout`, then the panel destroys them.
 */
import { MemberList, type MemberNode } from '../base/member-list.ts';

/** A connection that can close itself at its next clean boundary. */
export interface Drainable {
  /** Close after the current response (or now, when idle between requests). Called at most once. */
  drain(): void;
}

/** The set of drainable connections of one runtime (a list, not a Set: src/base/member-list.ts). */
export class DrainSet {
  readonly #members = new MemberList<Drainable>();
  #draining = false;

  /** True once `drainAll` has run: new connections should close after their first response. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Number of registered connections. */
  get size(): number {
    return this.#members.size;
  }

  /** Registers `d`; returns the function that unregisters it. While draining, `d` is drained now. */
  register(d: Drainable): () => void {
    const node = this.add(d);
    return () => {
      if (node !== undefined) this.#members.remove(node);
    };
  }

  /**
   * Registers `d` without making an unregister function (a driver that keeps no closure per
   * connection, issue 18); returns its place, which `remove` takes when it ends. While
   * draining, `d` is drained now and nothing is returned.
   */
  add(d: Drainable): MemberNode<Drainable> | undefined {
    if (this.#draining) {
      d.drain();
      return undefined;
    }
    return this.#members.add(d);
  }

  /** Unregisters the member `add` returned (nothing for undefined or a second call). */
  remove(node: MemberNode<Drainable> | undefined): void {
    if (node !== undefined) this.#members.remove(node);
  }

  /** Asks every registered connection to close at its next boundary. */
  drainAll(): void {
    this.#draining = true;
    const members = this.#members.values();
    this.#members.clear();
    for (const d of members) d.drain();
  }
}
