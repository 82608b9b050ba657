/**
 * Trace and span ids from a pool of random bytes: one `randomFillSync` per 4 KiB (256 spans'
 * worth of ids), each id one `toString('hex')` of its slice. The SDK's generator builds each id
 * character by character from `Math.random()`; this is what a span costs in ids instead.
 */
import { randomFillSync } from 'node:crypto';

const POOL = 4096;

/** Random ids, never all zeros (W3C Trace Context: an all-zero id is invalid). */
export class RandomIds {
  readonly #pool = Buffer.allocUnsafe(POOL);
  #at = POOL;

  /** A 32-hex-digit trace id. */
  traceId(): string {
    return this.#take(16);
  }

  /** A 16-hex-digit span id. */
  spanId(): string {
    return this.#take(8);
  }

  #take(bytes: number): string {
    for (;;) {
      if (this.#at + bytes > POOL) {
        randomFillSync(this.#pool);
        this.#at = 0;
      }
      const from = this.#at;
      this.#at += bytes;
      const pool = this.#pool;
      for (let i = from; i < from + bytes; i++) if (pool[i] !== 0) return pool.toString('hex', from, from + bytes);
    }
  }
}
