/**
 * The injectable source of randomness (STYLE §20): operators and GSLB take a `Random`, tests pass
 * a seeded one and assert exact sequences.
 */

/** Returns a float in [0, 1). */
export type Random = () => number;

export const defaultRandom: Random = Math.random;

/** A small deterministic generator (mulberry32) for tests and reproducible benchmarks. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, n). */
export function randomInt(random: Random, n: number): number {
  return Math.floor(random() * n);
}
