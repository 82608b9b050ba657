/**
 * Upstream connections of ONE client connection, for per-request routing. They are never shared
 * with another client connection, so a PROXY header sent on one always names its own client.
 *
 *   take(key) ─► idle link for that backend? ──► reused (it leaves the pool)
 *   put(link, max) ─► newest ─► [ idle links, least recently used first ] ─► over max: oldest closed
 *
 * 1. `take(key)` hands back an idle link to that backend (same PROXY mode) that this client
 *    connection used before; `put(link, max)` parks the current link when a request goes
 *    elsewhere. At most `max` links stay idle (`limits.maxIdleUpstreamsPerConnection`): parking
 *    one more closes the least recently used, so a client connection holds at most `max` idle
 *    upstream descriptors plus its current (or connecting) one, the budget src/process/nofile.ts checks.
 * 2. New connections go through src/upstream/ `openUpstreamThen`, handed the jack the driver
 *    already picked (`pickFirst`) as attempt 1, so `findJack` runs once per attempt.
 */
import type { UpstreamLink } from './upstream-link.ts';

/** What the pool needs of a link (UpstreamLink). */
export type PooledLink = Pick<UpstreamLink, 'key' | 'reusable' | 'destroy'> & {
  readonly socket: { readonly destroyed: boolean };
};

/** Idle upstream links of one client connection, by `linkKey`, least recently used first. */
export class UpstreamPool<L extends PooledLink = UpstreamLink> {
  /**
   * Map order is the LRU order: `put` appends, the front is evicted first. Made by the first
   * `put`: a connection that never parks a link (one request, or one backend) makes no Map
   * (issue 18, newconn).
   */
  #idle: Map<string, L> | undefined;

  /** Idle links held now. */
  get size(): number {
    return this.#idle?.size ?? 0;
  }

  /** The keys of the idle links, least recently used first (tests, diagnostics). */
  keys(): string[] {
    return this.#idle === undefined ? [] : [...this.#idle.keys()];
  }

  /** The idle links, least recently used first (the idle tick, per-request-links.ts tickIdle). */
  values(): IterableIterator<L> {
    return (this.#idle ?? new Map<string, L>()).values();
  }

  /** Removes and returns the idle link for `key`, if one is still open. */
  take(key: string): L | undefined {
    if (this.#idle === undefined) return undefined;
    const link = this.#idle.get(key);
    if (link === undefined) return undefined;
    this.#idle.delete(key);
    return link.reusable && !link.socket.destroyed ? link : undefined;
  }

  /**
   * Parks an idle link as the most recently used. A link already parked under the same key is
   * closed (one per backend); then the least recently used are closed until at most `max` stay.
   */
  put(link: L, max: number): void {
    if (this.#idle === undefined) this.#idle = new Map();
    const idle = this.#idle;
    const old = idle.get(link.key);
    if (old !== undefined) {
      idle.delete(link.key);
      if (old !== link) old.destroy();
    }
    idle.set(link.key, link);
    for (const [key, lru] of idle) {
      if (idle.size <= max) break;
      idle.delete(key);
      lru.destroy();
    }
  }

  /** Forgets `link` (it closed). */
  forget(link: L): void {
    if (this.#idle?.get(link.key) === link) this.#idle.delete(link.key);
  }

  /** Closes every idle link. */
  destroyAll(): void {
    if (this.#idle === undefined || this.#idle.size === 0) return;
    const links = [...this.#idle.values()];
    this.#idle.clear();
    for (const link of links) link.destroy();
  }
}
