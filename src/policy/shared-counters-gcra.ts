/**
 * GCRA per key in a region of the shared counters' buffer: the arithmetic of `gcra.ts`, its
 * state one 64-bit TAT word per key that every thread updates by compare-exchange.
 *
 *   region of S slots (S = the power of two ≥ maxKeys), bytes from its offset
 *   [0, 8)              Int32: slots in use (a slot is claimed once, never emptied)
 *   [8, 8 + 4S)         Int32 per slot: the key's tag, its 32-bit FNV-1a hash (0 = empty)
 *   [8 + 4S, 8 + 12S)   BigInt64 per slot: the TAT in whole microseconds (0 = long ago)
 *
 * 1. `take(key, now)`: the key's slot is found in its probe window (PROBES slots from
 *    `hash & (S−1)`); then a loop: load the TAT, compute next = max(TAT, now) + T; refused
 *    (return the wait) when next − now − τ > `SLACK` (gcra.ts), else compare-exchange TAT → next; a lost exchange
 *    means another thread counted meanwhile, so compute again. Two threads never both take the
 *    last place of a burst.
 * 2. A new key takes the first empty slot of its window. A full window evicts the slot with the
 *    oldest TAT: the new key inherits that TAT, which is at most a fresh burst (the oldest is
 *    usually in the past, i.e. exactly a fresh burst) and never more. So a rotated address
 *    cannot grow memory, and an evicted key at worst gets a fresh burst when it comes back.
 * 3. Approximations, all bounded: two keys whose 32-bit hashes are equal share a count (1 in
 *    2^32 per pair in one window); a thread that found a key's slot just before another thread
 *    evicted it counts one event against the new key. TATs are kept to the microsecond.
 * 4. Cost: a take reads its window's tags (and TATs when the window is full) and allocates two
 *    small BigInts (the TAT read and the TAT written). A 64-bit word is what makes the update
 *    one compare-exchange; two 32-bit words would need a version word and a retry protocol.
 */
import type { RateCounter, RateSpec } from '../contracts/policy.ts';
import { SLACK } from './gcra.ts';
import { keyHash, tableSize } from './shared-counters-layout.ts';

const PROBES = 8;

/** Bytes of a rate region for `maxKeys` keys. */
export function rateRegionBytes(maxKeys: number): number {
  return 8 + 12 * tableSize(maxKeys);
}

/** A GCRA counter over one region of a shared buffer. */
export class SharedGcra implements RateCounter {
  readonly #used: Int32Array;
  readonly #tags: Int32Array;
  readonly #tats: BigInt64Array;
  readonly #mask: number;
  readonly #probes: number;
  readonly #interval: number;
  readonly #tolerance: number;

  /** The region at byte `offset` of `buffer` (8-byte aligned, `rateRegionBytes(spec.maxKeys)` long). */
  constructor(buffer: SharedArrayBuffer, offset: number, spec: RateSpec) {
    const slots = tableSize(spec.maxKeys);
    this.#used = new Int32Array(buffer, offset, 2);
    this.#tags = new Int32Array(buffer, offset + 8, slots);
    this.#tats = new BigInt64Array(buffer, offset + 8 + 4 * slots, slots);
    this.#mask = slots - 1;
    this.#probes = Math.min(PROBES, slots);
    this.#interval = spec.per / spec.rate;
    this.#tolerance = spec.burst * this.#interval;
  }

  get size(): number {
    return Atomics.load(this.#used, 0);
  }

  take(key: string, now: number): number {
    const tats = this.#tats;
    const i = this.#slot(key);
    for (;;) {
      const stored = Atomics.load(tats, i);
      const at = Number(stored) / 1000;
      const tat = stored === 0n || at < now ? now : at;
      const next = tat + this.#interval;
      const wait = next - now - this.#tolerance;
      if (wait > SLACK) return wait;
      if (Atomics.compareExchange(tats, i, stored, BigInt(Math.round(next * 1000))) === stored) return 0;
    }
  }

  /** The key's slot: found in its window, else the first empty one, else the oldest one evicted. */
  #slot(key: string): number {
    const tags = this.#tags;
    const tag = keyHash(key) | 0 || 1;
    const home = tag & this.#mask;
    for (;;) {
      let empty = -1;
      let oldest = -1;
      let oldestTag = 0;
      let oldestTat = 0n;
      for (let j = 0; j < this.#probes; j++) {
        const i = (home + j) & this.#mask;
        const t = Atomics.load(tags, i);
        if (t === tag) return i;
        if (t === 0) {
          // Slots are never emptied: the key, if here, would sit before the first empty one.
          empty = i;
          break;
        }
        const tat = Atomics.load(this.#tats, i);
        if (oldest < 0 || tat < oldestTat) {
          oldest = i;
          oldestTag = t;
          oldestTat = tat;
        }
      }
      const target = empty >= 0 ? empty : oldest;
      const was = Atomics.compareExchange(tags, target, empty >= 0 ? 0 : oldestTag, tag);
      if (was === tag) return target;
      if (was === (empty >= 0 ? 0 : oldestTag)) {
        if (empty >= 0) Atomics.add(this.#used, 0, 1);
        return target;
      }
      // Another thread took that slot meanwhile (maybe for this very key): look again.
    }
  }
}
