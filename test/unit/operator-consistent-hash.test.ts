import { describe, expect, it } from 'vitest';
import { consistentHash, consistentHashOptions } from '../../operators/consistent-hash.ts';
import type { PluginContext } from '../../src/contracts/plugin.ts';
import {
  backend,
  candidates,
  FIRST,
  jackOf,
  operatorConformance,
  request,
  sub,
  testContext,
  variedRequest,
} from '../conformance/operator.ts';

const make = (ctx: PluginContext, o: Record<string, unknown> = {}) =>
  consistentHash.create(consistentHashOptions.parse(o), ctx);

operatorConformance('consistent-hash', (ctx) => make(ctx));
operatorConformance('consistent-hash (header key, no bound)', (ctx) =>
  make(ctx, { key: 'header', header: 'X-User', balanceFactor: 0 }),
);

describe('consistent-hash', () => {
  it('moves about 1/N of the keys when one of N backends is removed', () => {
    const N = 10;
    const op = make(testContext(), { balanceFactor: 0 });
    const all = Array.from({ length: N }, (_, i) => backend(9000 + i));
    const before = candidates([sub('s1', 1, all)]);
    const after = candidates([sub('s1', 1, all.slice(1))]);
    const K = 20_000;
    let moved = 0;
    let wasOnRemoved = 0;
    for (let k = 0; k < K; k++) {
      const r = variedRequest(k);
      const a = jackOf(op.findJack(r, before, FIRST)).backend.id;
      const b = jackOf(op.findJack(r, after, FIRST)).backend.id;
      if (a === all[0]!.id) wasOnRemoved++;
      else if (a !== b) moved++;
    }
    // Only keys of the removed backend move (≈ 1/N of all keys); nobody else's keys do.
    expect(moved).toBe(0);
    expect(Math.abs(wasOnRemoved / K - 1 / N)).toBeLessThan(0.03);
  });

  it('keeps the same key on the same backend', () => {
    const op = make(testContext(), { key: 'cookie', cookie: 'sid' });
    const c = candidates([sub('s1', 1, [backend(1), backend(2), backend(3)])]);
    const r = request({ cookies: { sid: 'abc' } });
    const first = jackOf(op.findJack(r, c, FIRST)).backend.id;
    for (let k = 0; k < 20; k++) expect(jackOf(op.findJack(r, c, FIRST)).backend.id).toBe(first);
  });

  it('bounds the load under a skewed key set', () => {
    const ctx = testContext();
    const factor = 1.25;
    const op = make(ctx, { key: 'header', header: 'X-User', balanceFactor: factor });
    const bs = Array.from({ length: 5 }, (_, i) => backend(9100 + i));
    const c = candidates([sub('s1', 1, bs)]);
    // 90 % of requests carry one hot key; connections stay open.
    for (let k = 0; k < 1000; k++) {
      const user = k % 10 === 0 ? `cold${k}` : 'hot';
      const j = jackOf(op.findJack(request({ headers: { 'X-User': user } }), c, FIRST));
      ctx.registry.connected(j.backend.id, 1);
      const total = bs.reduce((t, b) => t + ctx.registry.get(b.id).active, 0);
      for (const b of bs) expect(ctx.registry.get(b.id).active).toBeLessThanOrEqual(Math.ceil((factor * total) / 5));
    }
  });

  it('rejects key header without a header name', () => {
    expect(consistentHashOptions.safeParse({ key: 'header' }).success).toBe(false);
    expect(consistentHashOptions.safeParse({ balanceFactor: 0.5 }).success).toBe(false);
  });
});
