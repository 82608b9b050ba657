import { describe, expect, it } from 'vitest';
import { random } from '../../operators/random.ts';
import { seededRandom } from '../../src/base/random.ts';
import {
  backend,
  candidates,
  FIRST,
  jackOf,
  operatorConformance,
  request,
  sub,
  testContext,
} from '../conformance/operator.ts';

operatorConformance('random', (ctx) => random.create({}, ctx));

describe('random: weighted random from the injected source', () => {
  it('gives the exact sequence the seeded source dictates', () => {
    const weights = [1, 3, 2];
    const op = random.create({}, testContext(42));
    const c = candidates([
      sub(
        's1',
        1,
        weights.map((w, i) => backend(i + 1, w)),
      ),
    ]);
    const got = Array.from({ length: 50 }, () => jackOf(op.findJack(request(), c, FIRST)).backend.name);
    // Reference model: one draw r in [0, 6), backend = first whose cumulative weight exceeds r.
    const r = seededRandom(42);
    const expected = Array.from({ length: 50 }, () => {
      const x = r() * 6;
      return x < 1 ? 'b1' : x < 4 ? 'b2' : 'b3';
    });
    expect(got).toEqual(expected);
  });
});
