/**
 * Upstream connections of ONE client connection, for per-request routing. They are never shared
 * with another client connection, so a PROXY header sent on one always names its own client.
 *
 * 1. `take(key)` hands back an idle link to that backend (same PROXY mode) that this client
 *    connection used before; `put(link)` parks the current link when a request goes elsewhere.
 * 2. New connections go through src/upstream.ts `openUpstream`; `firstPick` makes its first
 *    attempt use the jack the driver already picked, so `findJack` runs once per attempt.
 */
import type { Attempt, Candidates, Jack, Operator, Request } from '../../src/types.ts';
import type { UpstreamLink } from './upstream-link.ts';

/** Idle upstream links of one client connection, by `linkKey`. */
export class UpstreamPool {
  readonly #idle = new Map<string, UpstreamLink>();

  /** Removes and returns the idle link for `key`, if one is still open. */
  take(key: string): UpstreamLink | undefined {
    const link = this.#idle.get(key);
    if (link === undefined) return undefined;
    this.#idle.delete(key);
    return link.reusable && !link.socket.destroyed ? link : undefined;
  }

  /** Parks an idle link; a link already parked under the same key is closed (one per backend). */
  put(link: UpstreamLink): void {
    const old = this.#idle.get(link.key);
    if (old !== undefined && old !== link) old.destroy();
    this.#idle.set(link.key, link);
  }

  /** Forgets `link` (it closed). */
  forget(link: UpstreamLink): void {
    if (this.#idle.get(link.key) === link) this.#idle.delete(link.key);
  }

  /** Closes every idle link. */
  destroyAll(): void {
    for (const link of this.#idle.values()) link.destroy();
    this.#idle.clear();
  }
}

/**
 * The engine's operator, except that attempt 1 returns `first`: the driver already picked it to
 * see whether a current or pooled link serves, so `openUpstream` (src/upstream.ts, retries and
 * upstream TLS included) connects exactly that backend and asks `findJack` only for retries.
 */
export function firstPick(operator: Operator, first: Jack): Operator {
  return {
    findJack: (request: Request, candidates: Candidates, attempt: Attempt) =>
      attempt.number === 1 ? first : operator.findJack(request, candidates, attempt),
  };
}
