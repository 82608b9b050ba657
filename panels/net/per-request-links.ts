/**
 * The upstream links of one per-request client connection: the current one, which the request
 * in flight is written to, and the idle ones this client used before (upstream-pool.ts).
 *
 *   request for backend key ─► current serves it? ─► reused
 *                              └─ pooled one for it? ─► taken out, the current one parked
 *                              └─ neither ─► undefined: the driver opens a new link (`use`)
 *   write ─► the current link's socket full? ─► the client waits for its 'drain' (`full`)
 *
 * 1. `forKey(key)` takes the pooled link out before the current one is parked (LRU, at most
 *    `limits.maxIdleUpstreamsPerConnection` idle), so parking never evicts the link about to be
 *    reused; a current link the backend will not reuse is closed instead of parked.
 * 2. Changing the current link drops a wait for the old one's 'drain'.
 */
import type { UpstreamLink } from './upstream-link.ts';
import { UpstreamPool } from './upstream-pool.ts';

/** Who hears that the current link can take more (the driver: no closure per connection for it). */
export interface WritableListener {
  /** The current link took what was written (its 'drain'); the client may be read again. */
  onLinkWritable(): void;
}

/** The current link and the idle ones of one client connection. */
export class ClientLinks {
  #current: UpstreamLink | undefined;
  readonly #pool = new UpstreamPool();
  readonly #maxIdle: number;
  /** The current link's socket is full: the client waits for its 'drain'. */
  #full = false;
  readonly #onDrain: () => void;

  constructor(maxIdle: number, listener: WritableListener) {
    this.#maxIdle = maxIdle;
    this.#onDrain = () => {
      this.#full = false;
      if (this.#current !== undefined) this.#current.traffic.count++;
      listener.onLinkWritable();
    };
  }

  /** The link the request in flight is written to. */
  get current(): UpstreamLink | undefined {
    return this.#current;
  }

  /** True while the current link's socket is full. */
  get full(): boolean {
    return this.#full;
  }

  /** Makes `link` the current one (undefined: none); a wait for the old one's 'drain' is dropped. */
  use(link: UpstreamLink | undefined): void {
    if (this.#full) {
      this.#current?.socket.removeListener('drain', this.#onDrain);
      this.#full = false;
    }
    this.#current = link;
  }

  /** The current link if it serves `key`, else a pooled one made current (step 1); undefined: none. */
  forKey(key: string): UpstreamLink | undefined {
    const current = this.#current;
    if (current !== undefined && current.key === key && current.reusable && !current.socket.destroyed) return current;
    const pooled = this.#pool.take(key);
    if (current !== undefined) {
      this.use(undefined);
      if (current.reusable && !current.socket.destroyed) this.#pool.put(current, this.#maxIdle);
      else current.destroy();
    }
    if (pooled !== undefined) this.use(pooled);
    return pooled;
  }

  /** Writes `bytes` to the current link (if it is open); when its socket is full, `full` until its 'drain'. */
  write(bytes: Buffer): void {
    const link = this.#current;
    if (link === undefined || link.socket.destroyed) return;
    link.traffic.count++;
    const ok = link.socket.write(bytes);
    if (!ok && !this.#full) {
      this.#full = true;
      link.socket.once('drain', this.#onDrain);
    }
  }

  /** `link` closed or broke: it leaves the pool (a pooled link's end is reported like the current one's). */
  forget(link: UpstreamLink): void {
    this.#pool.forget(link);
  }

  /** Closes every idle link (the connection ends, or becomes a tunnel). */
  closeIdle(): void {
    this.#pool.destroyAll();
  }

  /** Closes the current link and every idle one. */
  closeAll(): void {
    const link = this.#current;
    this.use(undefined);
    link?.destroy();
    this.#pool.destroyAll();
  }

  /** One idle tick for the pooled links: each quiet for IDLE_TICKS ticks is closed (per-request-idle.ts). */
  tickIdle(): void {
    if (this.#pool.size === 0) return;
    // Closed after the walk: a close only takes the link out of the pool later ('close').
    const stale: UpstreamLink[] = [];
    for (const pooled of this.#pool.values()) if (pooled.traffic.tick() && pooled.traffic.idle) stale.push(pooled);
    for (const link of stale) link.onTimeout();
  }
}
