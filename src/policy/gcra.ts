/**
 * A rate per key by GCRA (the generic cell rate algorithm; the arithmetic of a token bucket
 * with one number per key), in a table bounded by `maxKeys`.
 *
 *   interval T = per / rate          (ms between events at the sustained rate)
 *   tolerance τ = burst × T           (how far ahead of now a key may run)
 *   TAT = the key's theoretical arrival time (absent = long ago)
 *
 * 1. `take(key, now)`: next = max(TAT, now) + T. When next − now ≤ τ the event is allowed and
 *    TAT becomes next (a wait under `SLACK`, 1 µs, counts as none: rounding); otherwise it is
 *    refused, TAT unchanged, and the wait before the next allowed event is next − now − τ
 *    milliseconds. `burst` events at one instant pass, the next one waits T.
 * 2. The table is bounded by `maxKeys` in two generations (the LRU approximation of caches
 *    that must not pay a reorder per hit): a key taken (allowed or not) lives in the young
 *    `Map`, updated in place (one get and one set); a key found only in the old one moves to
 *    the young one. When the young one holds half of `maxKeys` (rounded up) it becomes the old
 *    one and the old one is dropped: keys not taken since the turn before are forgotten, and
 *    the last `⌈maxKeys/2⌉ − 1` keys taken are always kept. An evicted key
 *    starts afresh when it comes back, so address rotation costs at most `maxKeys` entries of
 *    memory. (A Map in use order, delete and set per take, cost 0.7 µs per request in the
 *    issue 42 bench profile.)
 */
import type { RateCounter, RateSpec } from '../contracts/policy.ts';

/**
 * A wait shorter than this (1 µs, in ms) is rounding, not a refusal: with T = 1000/3 ms,
 * (now + T) − now − T is a hair above 0 and 3/s with burst 1 would never pass.
 */
export const SLACK = 1e-3;

/** The local (one thread) GCRA counter. */
export class GcraCounter implements RateCounter {
  #young = new Map<string, number>();
  #old = new Map<string, number>();
  readonly #interval: number;
  readonly #tolerance: number;
  /** Keys in the young generation when it turns old: half of `maxKeys` rounded up (young < it, old ≤ it: at most `maxKeys` in all). */
  readonly #generation: number;

  constructor(spec: RateSpec) {
    this.#interval = spec.per / spec.rate;
    this.#tolerance = spec.burst * this.#interval;
    this.#generation = Math.max(1, Math.ceil(spec.maxKeys / 2));
  }

  get size(): number {
    return this.#young.size + this.#old.size;
  }

  take(key: string, now: number): number {
    const young = this.#young;
    let stored = young.get(key);
    if (stored === undefined) {
      stored = this.#old.get(key);
      if (stored !== undefined) this.#old.delete(key);
    }
    const tat = stored === undefined || stored < now ? now : stored;
    const next = tat + this.#interval;
    const wait = next - now - this.#tolerance;
    const allowed = wait <= SLACK;
    young.set(key, allowed ? next : tat);
    if (young.size >= this.#generation) {
      this.#old = young;
      this.#young = new Map();
    }
    return allowed ? 0 : wait;
  }
}
