import { describe, expect, it } from 'vitest';
import { p2c } from '../../operators/p2c.ts';
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

operatorConformance('p2c', (ctx) => p2c.create({}, ctx));

describe('p2c: two random choices on active connections', () => {
  it('never picks the busiest of the pool when two are drawn', () => {
    const ctx = testContext(3);
    const op = p2c.create({}, ctx);
    const c = candidates([sub('s1', 1, [backend(1), backend(2), backend(3)])]);
    for (let k = 0; k < 10; k++) ctx.registry.connected('127.0.0.1:3', 1);
    for (let k = 0; k < 300; k++) expect(jackOf(op.findJack(request(), c, FIRST)).backend.name).not.toBe('b3');
  });

  it('keeps load balanced when connections stay open', () => {
    const ctx = testContext(5);
    const op = p2c.create({}, ctx);
    const c = candidates([
      sub(
        's1',
        1,
        [1, 2, 3, 4].map((p) => backend(p)),
      ),
    ]);
    for (let k = 0; k < 400; k++) ctx.registry.connected(jackOf(op.findJack(request(), c, FIRST)).backend.id, 1);
    const active = [1, 2, 3, 4].map((p) => ctx.registry.get(`127.0.0.1:${p}`).active);
    expect(Math.max(...active) - Math.min(...active)).toBeLessThanOrEqual(4);
  });
});
