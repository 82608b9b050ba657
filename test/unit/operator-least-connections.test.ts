import { describe, expect, it } from 'vitest';
import { leastConnections } from '../../operators/least-connections.ts';
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

operatorConformance('least-connections', (ctx) => leastConnections.create({}, ctx));

describe('least-connections: weighted least connections, SWRR tie-break', () => {
  // Rows: [source, weights (names b1…), expected] — connections increment on every pick, never decrement.
  const rows: Array<[string, number[], string]> = [
    ['bfe.md §2.4 WLC smooth 300/200/100', [300, 200, 100], 'b1 b2 b3 b1 b2 b1 b3 b1 b2'],
    [
      'bfe.md §2.4 WLC four backends 300/200/100/50',
      [300, 200, 100, 50],
      'b1 b2 b3 b4 b1 b2 b1 b1 b2 b3 b1 b2 b1 b1 b2 b3 b4 b1 b2',
    ],
  ];
  it.each(rows)('%s', (_source, weights, expected) => {
    const ctx = testContext();
    const op = leastConnections.create({}, ctx);
    const c = candidates([
      sub(
        's1',
        1,
        weights.map((w, i) => backend(i + 1, w)),
      ),
    ]);
    const got: string[] = [];
    for (let k = 0; k < expected.split(' ').length; k++) {
      const j = jackOf(op.findJack(request(), c, FIRST));
      ctx.registry.connected(j.backend.id, 1);
      got.push(j.backend.name);
    }
    expect(got.join(' ')).toBe(expected);
  });

  it('sends the next connection to the least loaded backend per weight', () => {
    const ctx = testContext();
    const op = leastConnections.create({}, ctx);
    const c = candidates([sub('s1', 1, [backend(1, 1), backend(2, 2)])]);
    ctx.registry.connected('127.0.0.1:1', 1); // b1: 1/1, b2: 0/2
    expect(jackOf(op.findJack(request(), c, FIRST)).backend.name).toBe('b2');
    ctx.registry.connected('127.0.0.1:2', 1);
    ctx.registry.connected('127.0.0.1:2', 1);
    ctx.registry.connected('127.0.0.1:2', 1); // b1: 1/1, b2: 3/2
    expect(jackOf(op.findJack(request(), c, FIRST)).backend.name).toBe('b1');
    ctx.registry.closed('127.0.0.1:2'); // b2: 2/2 ties with b1
    const names = new Set(Array.from({ length: 4 }, () => jackOf(op.findJack(request(), c, FIRST)).backend.name));
    expect(names).toEqual(new Set(['b1', 'b2']));
  });
});
