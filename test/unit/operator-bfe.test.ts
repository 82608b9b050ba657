import { describe, expect, it } from 'vitest';
import { bfe } from '../../operators/bfe/index.ts';
import { mod64, murmur3First64 } from '../../src/base/murmur3.ts';
import type { ClusterPolicy } from '../../src/contracts/types.ts';
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

operatorConformance('bfe', (ctx) => bfe.create({}, ctx));

const STICKY: Partial<ClusterPolicy> = { balance: 'sticky', hash: { strategy: 'header', key: 'X-K' } };
// bfe.md §2.4: b1, b2, b3 on 127.0.0.1:80/81/82 with internal weights 300/200/100.
const BS = [backend(80, 3), backend(81, 2), backend(82, 1)];

describe('bfe operator: the cluster balance mode', () => {
  it('bfe.md §2.4 sticky: murmur3 h1 of key byte 0x01 mod 600 is 262', () => {
    const [hi, lo] = murmur3First64(Uint8Array.of(1));
    expect(mod64(hi, lo, 600)).toBe(262);
  });

  it('bfe.md §2.4 sticky, key 0x01: always b1; with b1 down always b3', () => {
    const ctx = testContext();
    const op = bfe.create({}, ctx);
    const c = candidates([sub('s1', 1, BS)], STICKY);
    const r = request({ headers: { 'X-K': '\x01' } });
    for (let k = 0; k < 9; k++) expect(jackOf(op.findJack(r, c, FIRST)).backend.id).toBe('127.0.0.1:80');
    ctx.registry.setAvailable('127.0.0.1:80', false);
    for (let k = 0; k < 9; k++) expect(jackOf(op.findJack(r, c, FIRST)).backend.id).toBe('127.0.0.1:82');
  });

  it('sticky orders backends by addr:port, not by config order', () => {
    const op = bfe.create({}, testContext());
    const c = candidates([sub('s1', 1, [BS[2]!, BS[0]!, BS[1]!])], STICKY);
    expect(jackOf(op.findJack(request({ headers: { 'X-K': '\x01' } }), c, FIRST)).backend.id).toBe('127.0.0.1:80');
  });

  it('bfe.md §2.4 wrr and wlc sequences through policy.balance', () => {
    const ctx = testContext();
    const op = bfe.create({}, ctx);
    const wrr = candidates([sub('s1', 1, BS)]);
    const seq = (c: typeof wrr, connect: boolean) =>
      Array.from({ length: 9 }, () => {
        const j = jackOf(op.findJack(request(), c, FIRST));
        if (connect) ctx.registry.connected(j.backend.id, 1);
        return { 80: 'b1', 81: 'b2', 82: 'b3' }[j.backend.port];
      }).join(' ');
    expect(seq(wrr, false)).toBe('b1 b2 b1 b3 b2 b1 b1 b2 b1');
    const wlc = candidates([sub('s1', 1, [backend(80, 3), backend(81, 2), backend(82, 1)])], { balance: 'wlc' });
    expect(seq(wlc, true)).toBe('b1 b2 b3 b1 b2 b1 b3 b1 b2');
  });
});
