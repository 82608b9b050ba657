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
 * 2. The table is a `Map` in use order: a key taken (allowed or not) moves to the end; a new key
 *    beyond `maxKeys` evicts the least recently used one. An evicted key starts afresh when it
 *    comes back, so address rotation costs at most `maxKeys` entries of memory.
 */
import type { RateCounter, RateSpec } from '../contracts/policy.ts';

/**
 * A wait shorter than this (1 µs, in ms) is rounding, not a refusal: with T = 1000/3 ms,
 * (now + T) − now − T is a hair above 0 and 3/s with burst 1 would never pass.
 */
export const SLACK = 1e-3;

/** The local (one thread) GCRA counter. */
export class GcraCounter implements RateCounter {
  readonly #tat = new Map<string, number>();
  readonly #interval: number;
  readonly #tolerance: number;
  readonly #maxKeys: number;

  constructor(spec: RateSpec) {
    this.#interval = spec.per / spec.rate;
    this.#tolerance = spec.burst * this.#interval;
    this.#maxKeys = Math.max(1, spec.maxKeys);
  }

  get size(): number {
    return this.#tat.size;
  }

  take(key: string, now: number): number {
    const table = this.#tat;
    const stored = table.get(key);
    const tat = stored === undefined || stored < now ? now : stored;
    const next = tat + this.#interval;
    const wait = next - now - this.#tolerance;
    if (stored !== undefined) table.delete(key);
    else if (table.size >= this.#maxKeys) table.delete(table.keys().next().value as string);
    if (wait > SLACK) {
      table.set(key, tat);
      return wait;
    }
    table.set(key, next);
    return 0;
  }
}
