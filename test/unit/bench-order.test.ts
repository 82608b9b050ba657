/**
 * `npm run bench` rounds: each round takes the targets in a rotated order, so no target always
 * runs right after the same neighbours (bench/run.ts `rotated`).
 */
import { describe, expect, it } from 'vitest';
import { rotated } from '../../bench/run.ts';

describe('bench round order (rotated)', () => {
  it('starts each round a share further down the list', () => {
    const list = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(rotated(list, 0, 3)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(rotated(list, 1, 3)).toEqual(['c', 'd', 'e', 'f', 'a', 'b']);
    expect(rotated(list, 2, 3)).toEqual(['e', 'f', 'a', 'b', 'c', 'd']);
  });

  it('puts every target at a different place in each round', () => {
    const list = Array.from({ length: 19 }, (_, i) => i);
    for (const t of list) {
      const places = [0, 1, 2].map((r) => rotated(list, r, 3).indexOf(t));
      expect(new Set(places).size).toBe(3);
    }
  });

  it('keeps every target exactly once, for any count of rounds', () => {
    for (const rounds of [1, 2, 5, 9]) {
      for (let r = 0; r < rounds; r++) expect([...rotated(['x', 'y', 'z'], r, rounds)].sort()).toEqual(['x', 'y', 'z']);
    }
    expect(rotated([], 1, 3)).toEqual([]);
  });
});
