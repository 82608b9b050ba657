import { describe, expect, it } from 'vitest';
import { roundRobin } from '../../operators/round-robin.ts';
import { ipHashBytes } from '../../src/base/ip.ts';
import { mod64, murmur3First64, murmur3x64_128Big } from '../../src/base/murmur3.ts';
import { seededRandom } from '../../src/base/random.ts';
import { type Attempt, BLACKHOLE, type Candidates, isRefusal, type SubCluster } from '../../src/contracts/types.ts';
import { type BackendPicker, balance, chooseSubcluster, hashBucket, hashKey } from '../../src/routing/gslb.ts';
import { backend, candidates, FIRST, jackOf, request, sub, testContext } from '../conformance/operator.ts';

const hex = (hi: number, lo: number) => hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');

describe('murmur3 as GSLB uses it', () => {
  // Rows: [source, input, h1 hex]
  const rows: Array<[string, Uint8Array, string]> = [
    ['MurmurHash3_x64_128 of "" (seed 0) is all zero', new Uint8Array(0), '0000000000000000'],
    ['MurmurHash3_x64_128("hello") = cbd8a7b341bd9b02 5b1e906a48ae1d19', Buffer.from('hello'), 'cbd8a7b341bd9b02'],
  ];
  it.each(rows)('%s', (_source, input, h1) => {
    const [hi, lo] = murmur3First64(input);
    expect(hex(hi, lo)).toBe(h1);
    expect(murmur3x64_128Big(input)[0].toString(16).padStart(16, '0')).toBe(h1);
  });

  it('bfe.md §2.4: h1 of byte 0x01 mod 600 = 262', () => {
    expect(hashBucket(Uint8Array.of(1), 600, seededRandom(1))).toBe(262);
  });
});

describe('hash keys (bfe.md §5 getHashKey)', () => {
  const r = request({ clientIp: '198.51.100.7', headers: { 'X-User': 'ann' }, cookies: { sid: 's1' }, path: '/a?b' });
  it.each([
    ['client-ip: 4 bytes for IPv4', { strategy: 'client-ip', key: '' }, Uint8Array.of(198, 51, 100, 7)],
    ['header', { strategy: 'header', key: 'x-user' }, Buffer.from('ann')],
    ['cookie', { strategy: 'cookie', key: 'sid' }, Buffer.from('s1')],
    ['uri: the raw request-target', { strategy: 'uri', key: '' }, Buffer.from('/a?b')],
  ] as const)('%s', (_name, hash, bytes) => {
    expect(Buffer.from(hashKey(r, hash)!)).toEqual(Buffer.from(bytes));
  });
  it('an IPv4-mapped IPv6 client hashes as its IPv4 form', () => {
    const a = hashKey(request({ clientIp: '::ffff:198.51.100.7' }), { strategy: 'client-ip', key: '' });
    expect(Buffer.from(a!)).toEqual(Buffer.from([198, 51, 100, 7]));
    const v6 = hashKey(request({ clientIp: '2001:db8::1' }), { strategy: 'client-ip', key: '' });
    expect(v6!.length).toBe(16);
  });
  it('a missing header gives no key', () => {
    expect(hashKey(request(), { strategy: 'header', key: 'X-None' })).toBeUndefined();
  });
});

/** The sub-cluster a model of bfe.md §5 expects for `ip` over (name, weight) pairs. */
function expectedSub(ip: string, subs: Array<[string, number]>): string {
  const sorted = subs.filter(([, w]) => w > 0).sort(([a], [b]) => (a < b ? -1 : 1));
  const total = sorted.reduce((t, [, w]) => t + w, 0);
  const [hi, lo] = murmur3First64(ipHashBytes(ip));
  let w = mod64(hi, lo, total);
  for (const [name, weight] of sorted) {
    w -= weight;
    if (w < 0) return name;
  }
  throw new Error('unreachable');
}

const ip = (k: number) => `10.1.${(k >> 8) & 255}.${k & 255}`;

describe('GSLB sub-cluster choice (bfe.md §5)', () => {
  const c = candidates([sub('dc2', 30, [backend(2)]), sub('dc1', 70, [backend(1)])]);

  it('follows murmur3(client ip) % total over name order, so a client sticks to one sub-cluster', () => {
    const random = seededRandom(1);
    let dc1 = 0;
    for (let k = 0; k < 2000; k++) {
      const r = request({ clientIp: ip(k) });
      const want = expectedSub(ip(k), [
        ['dc2', 30],
        ['dc1', 70],
      ]);
      for (let t = 0; t < 3; t++) expect((chooseSubcluster(r, c, FIRST, random) as SubCluster).name).toBe(want);
      if (want === 'dc1') dc1++;
    }
    expect(Math.abs(dc1 / 2000 - 0.7)).toBeLessThan(0.04);
  });

  it('draws from the injected random source when the key is empty', () => {
    const cc = candidates([sub('a', 1, [backend(1)]), sub('b', 3, [backend(2)])], {
      hash: { strategy: 'header', key: 'X-None' },
    });
    const random = seededRandom(11);
    const model = seededRandom(11);
    for (let k = 0; k < 50; k++) {
      const got = (chooseSubcluster(request(), cc, FIRST, random) as SubCluster).name;
      expect(got).toBe(Math.floor(model() * 4) < 1 ? 'a' : 'b');
    }
  });

  it('refuses blackhole for the share sent to GSLB_BLACKHOLE', () => {
    const op = roundRobin.create({}, testContext());
    const bh = candidates([sub('dc1', 50, [backend(1)]), sub(BLACKHOLE, 50, [])]);
    let refused = 0;
    for (let k = 0; k < 1000; k++) {
      const r = op.findJack(request({ clientIp: ip(k) }), bh, FIRST);
      const want = expectedSub(ip(k), [
        ['dc1', 50],
        [BLACKHOLE, 50],
      ]);
      if (want === BLACKHOLE) {
        expect(r).toEqual({ refused: 'blackhole' });
        refused++;
      } else expect(jackOf(r).subcluster).toBe('dc1');
    }
    expect(refused).toBeGreaterThan(400);
    expect(refused).toBeLessThan(600);
  });
});

describe('retries and cross retries', () => {
  const pools = [
    sub('dc1', 1, [backend(11), backend(12)]),
    sub('dc2', 1, [backend(21)]),
    sub('dc3', 0, [backend(31)]),
    sub(BLACKHOLE, 0, []),
  ];
  // dc1 and dc2 share by client ip; after the first attempt, attempt.subclusters[0] pins the primary.
  const c: Candidates = candidates(pools, { retries: 1, crossRetries: 2 });

  function attempt(number: number, failed: string[], subclusters: string[]): Attempt {
    return { number, failed: new Set(failed), subclusters };
  }

  it('stays in the first sub-cluster for 1 + retries attempts, skipping failed backends', () => {
    const op = roundRobin.create({}, testContext());
    let k = 0;
    while (
      expectedSub(ip(k), [
        ['dc1', 1],
        ['dc2', 1],
      ]) !== 'dc1'
    )
      k++;
    const r = request({ clientIp: ip(k) });
    const j1 = jackOf(op.findJack(r, c, FIRST));
    expect(j1.subcluster).toBe('dc1');
    const j2 = jackOf(op.findJack(r, c, attempt(2, [j1.backend.id], [j1.subcluster])));
    expect(j2.subcluster).toBe('dc1');
    expect(j2.backend.id).not.toBe(j1.backend.id);
  });

  it('crosses to a random other sub-cluster, weight 0 included, never the blackhole', () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const op = roundRobin.create({}, testContext(seed));
      const j = jackOf(op.findJack(request(), c, attempt(3, ['127.0.0.1:11', '127.0.0.1:12'], ['dc1', 'dc1'])));
      expect(j.subcluster).not.toBe('dc1');
      seen.add(j.subcluster);
    }
    expect(seen).toEqual(new Set(['dc2', 'dc3']));
  });

  it('follows the injected random source for the cross sub-cluster', () => {
    const op = roundRobin.create({}, testContext(5));
    const model = seededRandom(5);
    for (let k = 0; k < 20; k++) {
      const j = jackOf(op.findJack(request(), c, attempt(3, [], ['dc1'])));
      expect(j.subcluster).toBe(['dc2', 'dc3'][Math.floor(model() * 2)]);
    }
  });

  it('moves on to cross retries early when the first sub-cluster has no fresh backend', () => {
    const op = roundRobin.create({}, testContext());
    const j = jackOf(op.findJack(request(), c, attempt(2, ['127.0.0.1:11', '127.0.0.1:12'], ['dc1'])));
    expect(['dc2', 'dc3']).toContain(j.subcluster);
  });

  it('repeats a failed backend only when no fresh one is left', () => {
    const noCross = candidates([sub('dc1', 1, [backend(11), backend(12)])], { retries: 3 });
    const op = roundRobin.create({}, testContext());
    const j = jackOf(op.findJack(request(), noCross, attempt(3, ['127.0.0.1:11', '127.0.0.1:12'], ['dc1', 'dc1'])));
    expect(['127.0.0.1:11', '127.0.0.1:12']).toContain(j.backend.id);
  });

  it('refuses beyond 1 + retries + crossRetries attempts', () => {
    const op = roundRobin.create({}, testContext());
    expect(isRefusal(op.findJack(request(), c, attempt(4, [], ['dc1'])))).toBe(false);
    expect(op.findJack(request(), c, attempt(5, [], ['dc1']))).toEqual({ refused: 'no_backend' });
  });

  it('calls the picker with the sub-cluster chosen and the failed set', () => {
    const calls: string[] = [];
    const picker: BackendPicker = {
      pick(s, _r, _c, exclude) {
        calls.push(`${s.name}:${exclude.size}`);
        return undefined;
      },
    };
    const one = candidates([sub('dc1', 1, [backend(11)])], { retries: 0 });
    expect(
      balance(picker, request(), one, { number: 1, failed: new Set(['x']), subclusters: [] }, Math.random),
    ).toEqual({
      refused: 'no_backend',
    });
    expect(calls).toEqual(['dc1:1', 'dc1:0']);
  });
});
