import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mod64, murmur3Bucket, murmur3First64, murmur3x64_128Big } from '../../src/base/murmur3.ts';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const first64 = (data: Uint8Array, seed = 0): bigint => {
  const [hi, lo] = murmur3First64(data, seed);
  return (BigInt(hi) << 32n) | BigInt(lo);
};

// Public MurmurHash3_x64_128 vectors: Guava Murmur3Hash128Test.testKnownValues (h1, h2 per seed).
const guava: ReadonlyArray<readonly [number, bigint, bigint, string]> = [
  [0, 0x629942693e10f867n, 0x92db0b82baeb5347n, 'hell'],
  [1, 0xa78ddff5adae8d10n, 0x128900ef20900135n, 'hello'],
  [2, 0x8a486b23f422e826n, 0xf962a2c58947765fn, 'hello '],
  [3, 0x2ea59f466f6bed8cn, 0xc610990acc428a17n, 'hello w'],
  [4, 0x79f6305a386c572cn, 0x46305aed3483b94en, 'hello wo'],
  [5, 0xc2219d213ec1f1b5n, 0xa1d8e2e0a52785bdn, 'hello wor'],
  [0, 0xe34bbc7bbc071b6cn, 0x7a433ca9c49a9347n, 'The quick brown fox jumps over the lazy dog'],
  [0, 0x658ca970ff85269an, 0x43fee3eaa68e5c3en, 'The quick brown fox jumps over the lazy cog'],
];

// BFE's bucket vectors: reference bfe.md §1.5 and §2.2 row 45 (primitive_test.go, values lower-cased).
const bfeBuckets: ReadonlyArray<readonly [string, number]> = [
  ['test-uid-0001', 5968],
  ['test-uid-0002', 4073],
  ['test-uid-0003', 4055],
  ['test-uid-0004', 9683],
];

describe('murmur3 x64-128', () => {
  it.each(guava)('seed %i matches Guava vector h1=%s (%s)', (seed, h1, h2, input) => {
    expect(first64(utf8(input), seed)).toBe(h1);
    expect(murmur3x64_128Big(utf8(input), seed)).toEqual([h1, h2]);
  });

  it('hashes the empty input with seed 0 to zero (all state stays 0 through fmix64)', () => {
    expect(murmur3First64(new Uint8Array(0))).toEqual([0, 0]);
  });

  it.each(bfeBuckets)('BFE bucket of %s is %i (bfe.md §2.2 row 45)', (input, bucket) => {
    expect(murmur3Bucket(utf8(input))).toBe(bucket);
    expect(murmur3Bucket(utf8(input), 10000)).toBe(Number(murmur3x64_128Big(utf8(input), 0)[0] % 10000n));
  });

  it('agrees with the BigInt reference on every length 0..40 (every tail case)', () => {
    const data = new Uint8Array(40);
    for (let i = 0; i < data.length; i++) data[i] = (i * 37 + 200) & 0xff;
    for (let n = 0; n <= data.length; n++) {
      const slice = data.subarray(0, n);
      expect(first64(slice, 7)).toBe(murmur3x64_128Big(slice, 7)[0]);
    }
  });

  it('agrees with the BigInt reference on arbitrary bytes and seeds (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat({ max: 0xffffffff }), (data, seed) => {
        expect(first64(data, seed)).toBe(murmur3x64_128Big(data, seed)[0]);
      }),
      { numRuns: 500 },
    );
  });
});

describe('mod64', () => {
  it('is exact for large halves and moduli below 2^31 (property against BigInt)', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 0xffffffff }),
        fc.nat({ max: 0xffffffff }),
        fc.integer({ min: 1, max: 0x7fffffff }),
        (hi, lo, n) => {
          expect(mod64(hi, lo, n)).toBe(Number(((BigInt(hi) << 32n) | BigInt(lo)) % BigInt(n)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('handles the extremes', () => {
    expect(mod64(0xffffffff, 0xffffffff, 0x7fffffff)).toBe(Number(0xffffffffffffffffn % 0x7fffffffn));
    expect(mod64(0, 5, 3)).toBe(2);
    expect(mod64(1, 0, 10000)).toBe(4294967296 % 10000);
  });
});
