/**
 * Things in progress per key (in-flight requests, streams or connections), at most `max` each.
 *
 * 1. `acquire(key)` takes a slot and returns its `Hold`, or undefined at `max`.
 * 2. `Hold.release()` gives the slot back once; a second call does nothing, so every end path
 *    (response done, client reset, backend reset, timeout, drain) may call it.
 * 3. A key whose count falls to 0 is deleted: the table holds only keys with a slot taken, so
 *    it is bounded by what is in progress (itself bounded by the connection caps).
 */
import type { ConcurrencyCounter, Hold } from '../contracts/policy.ts';

/** One slot taken; gives itself back once. */
class Slot implements Hold {
  #give: ((key: string) => void) | undefined;
  readonly #key: string;
  constructor(give: (key: string) => void, key: string) {
    this.#give = give;
    this.#key = key;
  }
  release(): void {
    const give = this.#give;
    if (give === undefined) return;
    this.#give = undefined;
    give(this.#key);
  }
}

/** The local (one thread) concurrency counter. */
export class LocalConcurrency implements ConcurrencyCounter {
  readonly #counts = new Map<string, number>();
  readonly #max: number;
  readonly #give = (key: string): void => {
    const n = this.#counts.get(key) ?? 0;
    if (n <= 1) this.#counts.delete(key);
    else this.#counts.set(key, n - 1);
  };

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#counts.size;
  }

  acquire(key: string): Hold | undefined {
    const n = this.#counts.get(key) ?? 0;
    if (n >= this.#max) return undefined;
    this.#counts.set(key, n + 1);
    return new Slot(this.#give, key);
  }
}
