import { describe, expect, it } from 'vitest';
import { roundRobin } from '../../operators/round-robin.ts';
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

operatorConformance('round-robin', (ctx) => roundRobin.create({}, ctx));

/** Names of `n` picks (backend `name` is `b<port>`). */
function sequence(op: ReturnType<typeof roundRobin.create>, c: ReturnType<typeof candidates>, n: number): string[] {
  return Array.from({ length: n }, () => jackOf(op.findJack(request(), c, FIRST)).backend.name);
}

describe('round-robin: smooth weighted round robin', () => {
  // Rows: [source, weights by port 1,2,3 (names b1 b2 b3), down ports, expected sequence]
  const rows: Array<[string, number[], number[], string]> = [
    ['bfe.md §6 / bal_rr.go header: {a:5,b:1,c:1} → aabacaa', [5, 1, 1], [], 'b1 b1 b2 b1 b3 b1 b1'],
    ['bfe.md §2.4 WRR smooth 300/200/100', [300, 200, 100], [], 'b1 b2 b1 b3 b2 b1 b1 b2 b1'],
    ['bfe.md §2.4 WRR with b1 down', [300, 200, 100], [1], 'b2 b3 b2 b2 b3 b2 b2 b3 b2'],
  ];
  it.each(rows)('%s', (_source, weights, down, expected) => {
    const ctx = testContext();
    const op = roundRobin.create({}, ctx);
    const bs = weights.map((w, i) => backend(i + 1, w));
    for (const p of down) ctx.registry.setAvailable(`127.0.0.1:${p}`, false);
    expect(sequence(op, candidates([sub('s1', 1, bs)]), expected.split(' ').length).join(' ')).toBe(expected);
  });

  it('ramps a recovered backend over slowStart (visible in the distribution)', () => {
    let now = 1_000_000;
    const ctx = testContext(1, () => now);
    const op = roundRobin.create({}, ctx);
    const c = candidates([sub('s1', 1, [backend(1), backend(2)])], { slowStart: 10_000 });
    ctx.registry.setAvailable('127.0.0.1:2', false);
    ctx.registry.setAvailable('127.0.0.1:2', true); // came back at `now`
    const shareOfB2 = (): number => {
      let n = 0;
      for (let k = 0; k < 1000; k++) if (jackOf(op.findJack(request(), c, FIRST)).backend.name === 'b2') n++;
      return n / 1000;
    };
    const early = shareOfB2();
    now += 5_000; // half-way: weight 0.5 vs 1 → share 1/3
    const mid = shareOfB2();
    now += 5_000; // ramp done: share 1/2
    const done = shareOfB2();
    expect(early).toBeLessThan(0.05);
    expect(Math.abs(mid - 1 / 3)).toBeLessThan(0.03);
    expect(Math.abs(done - 1 / 2)).toBeLessThan(0.01);
  });

  it('slow-starts a backend added by a reload, not those present at start', () => {
    let now = 5_000_000;
    const ctx = testContext(1, () => now);
    ctx.registry.retain(['127.0.0.1:1']);
    ctx.registry.retain(['127.0.0.1:1', '127.0.0.1:2']);
    expect(ctx.registry.get('127.0.0.1:1').upSince).toBe(0);
    expect(ctx.registry.get('127.0.0.1:2').upSince).toBe(now);
    const op = roundRobin.create({}, ctx);
    const c = candidates([sub('s1', 1, [backend(1), backend(2)])], { slowStart: 60_000 });
    const names = Array.from({ length: 200 }, () => jackOf(op.findJack(request(), c, FIRST)).backend.name);
    expect(names.filter((n) => n === 'b2').length).toBeLessThanOrEqual(3);
    now += 60_000;
    const later = Array.from({ length: 200 }, () => jackOf(op.findJack(request(), c, FIRST)).backend.name);
    expect(Math.abs(later.filter((n) => n === 'b2').length - 100)).toBeLessThanOrEqual(2);
  });
});
