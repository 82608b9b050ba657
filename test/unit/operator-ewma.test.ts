import { describe, expect, it } from 'vitest';
import { ewma } from '../../operators/ewma.ts';
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

operatorConformance('ewma', (ctx) => ewma.create({}, ctx));

describe('ewma: peak EWMA of connect latency × active connections', () => {
  it('avoids a backend whose connect latency jumped', () => {
    const ctx = testContext(9);
    const op = ewma.create({}, ctx);
    const c = candidates([sub('s1', 1, [backend(1), backend(2)])]);
    for (const p of [1, 2]) {
      ctx.registry.connected(`127.0.0.1:${p}`, 2);
      ctx.registry.closed(`127.0.0.1:${p}`);
    }
    ctx.registry.connected('127.0.0.1:2', 200); // peak: taken at once
    ctx.registry.closed('127.0.0.1:2');
    expect(ctx.registry.get('127.0.0.1:2').latencyEwma).toBe(200);
    for (let k = 0; k < 100; k++) expect(jackOf(op.findJack(request(), c, FIRST)).backend.name).toBe('b1');
  });

  it('lets a fast backend with a long queue lose to an idle slower one', () => {
    const ctx = testContext(9);
    const op = ewma.create({}, ctx);
    const c = candidates([sub('s1', 1, [backend(1), backend(2)])]);
    ctx.registry.connected('127.0.0.1:1', 1); // cost 1 × (active + 1) = 22
    for (let k = 0; k < 20; k++) ctx.registry.connected('127.0.0.1:1', 1);
    ctx.registry.connected('127.0.0.1:2', 5); // cost 5 × 2 = 10
    expect(jackOf(op.findJack(request(), c, FIRST)).backend.name).toBe('b2');
  });
});
