/**
 * Things in progress per key in a region of the shared counters' buffer: `concurrency.ts`
 * counted once for the process, as src/admission/shared-admission.ts counts clients.
 *
 *   region of S words (S = the store's `concurrencyKeys`, a power of two), bytes from its offset
 *   [0, 8)           Int32: words in use; the epoch (how many times `forget` cleared them)
 *   [8, 8 + 4S)      Int32 per word: (tag << 16 | count), 0 = free; tag = the high 16 bits of
 *                    the key's FNV-1a hash (never 0), home word = its low bits
 *
 * 1. `acquire(key)`: in the key's window (PROBES words from home) a word with its tag is
 *    incremented by compare-exchange unless it holds `max` (refused); no such word: the first
 *    free one is claimed as (tag, 1). Two threads never both take the last slot.
 * 2. `Hold.release()` gives the slot back once (later calls do nothing): a compare-exchange
 *    loop decrements the word it was taken from; a count reaching 0 frees the word, so the
 *    table holds only keys in progress. A hold taken before `forget` (a worker died: every
 *    count cleared, the epoch moved on) gives nothing back, so it cannot take a slot from a
 *    hold taken after.
 * 3. Bounded and fail-open, as the per-client connection cap: a key whose window is full of
 *    other keys is let through uncounted rather than refused; two keys share a count only when
 *    their tags are equal and they probe to the same word; counts are capped at 65535 per key.
 *    Two threads taking the first slot of a new key while another key's word in its window
 *    frees can give it two words: its cap is then relaxed by one until one of them empties.
 */
import type { ConcurrencyCounter, Hold } from '../contracts/policy.ts';
import { keyHash } from './shared-counters-layout.ts';

const PROBES = 16;
const MAX_COUNT = 0xffff;
const USED = 0;
const EPOCH = 1;

/** Bytes of a concurrency region of `words` words (a power of two). */
export function concurrencyRegionBytes(words: number): number {
  return 8 + 4 * words;
}

/** Let through uncounted: nothing to give back. */
const UNCOUNTED: Hold = { release() {} };

/** One slot taken in word `i`; gives itself back once. */
class SharedSlot implements Hold {
  #counter: SharedConcurrency | undefined;
  readonly #word: number;
  readonly #tag: number;
  readonly #epoch: number;
  constructor(counter: SharedConcurrency, word: number, tag: number, epoch: number) {
    this.#counter = counter;
    this.#word = word;
    this.#tag = tag;
    this.#epoch = epoch;
  }
  release(): void {
    const counter = this.#counter;
    if (counter === undefined) return;
    this.#counter = undefined;
    counter.give(this.#word, this.#tag, this.#epoch);
  }
}

/** A concurrency counter over one region of a shared buffer. */
export class SharedConcurrency implements ConcurrencyCounter {
  readonly #header: Int32Array;
  readonly #words: Int32Array;
  readonly #mask: number;
  readonly #probes: number;
  readonly #max: number;

  /** The region at byte `offset` of `buffer`, `concurrencyRegionBytes(words)` long. */
  constructor(buffer: SharedArrayBuffer, offset: number, words: number, max: number) {
    this.#header = new Int32Array(buffer, offset, 2);
    this.#words = new Int32Array(buffer, offset + 8, words);
    this.#mask = words - 1;
    this.#probes = Math.min(PROBES, words);
    this.#max = Math.min(max, MAX_COUNT);
  }

  get size(): number {
    return Atomics.load(this.#header, USED);
  }

  acquire(key: string): Hold | undefined {
    const a = this.#words;
    const h = keyHash(key);
    const tag = h >>> 16 || 1;
    const home = h & this.#mask;
    for (;;) {
      let free = -1;
      for (let j = 0; j < this.#probes; j++) {
        const i = (home + j) & this.#mask;
        for (;;) {
          const w = Atomics.load(a, i);
          if (w === 0) {
            if (free < 0) free = i;
            break;
          }
          if (w >>> 16 !== tag) break;
          if ((w & MAX_COUNT) >= this.#max) return undefined;
          if (Atomics.compareExchange(a, i, w, w + 1) === w) return this.#slot(i, tag);
        }
      }
      if (free < 0) return UNCOUNTED;
      if (Atomics.compareExchange(a, free, 0, (tag << 16) | 1) === 0) {
        Atomics.add(this.#header, USED, 1);
        return this.#slot(free, tag);
      }
      // The free word was taken meanwhile (maybe by this very key): look again.
    }
  }

  /**
   * The hold of a slot just taken, of the epoch read after taking it: a `forget` in between
   * makes it give back a count it did not take (relaxed by one), never leave one stuck.
   */
  #slot(word: number, tag: number): SharedSlot {
    return new SharedSlot(this, word, tag, Atomics.load(this.#header, EPOCH));
  }

  /** Gives one slot back to word `i` if it still counts `tag` since `epoch` (a `SharedSlot`'s release). */
  give(i: number, tag: number, epoch: number): void {
    const a = this.#words;
    for (;;) {
      if (Atomics.load(this.#header, EPOCH) !== epoch) return;
      const w = Atomics.load(a, i);
      if (w >>> 16 !== tag || (w & MAX_COUNT) === 0) return;
      const last = (w & MAX_COUNT) === 1;
      if (Atomics.compareExchange(a, i, w, last ? 0 : w - 1) === w) {
        if (last) Atomics.sub(this.#header, USED, 1);
        return;
      }
    }
  }

  /** Clears every count (a worker died holding some); holds taken before give nothing back. */
  forget(): void {
    Atomics.add(this.#header, EPOCH, 1);
    for (let i = 0; i < this.#words.length; i++) Atomics.store(this.#words, i, 0);
    Atomics.store(this.#header, USED, 0);
  }
}
