/**
 * MurmurHash3 x64-128, as BFE uses it (reference bfe.md §1.5, §5): spaolacci/murmur3 `Sum64`,
 * i.e. the first 64-bit word (h1) of MurmurHash3_x64_128, seed 0 by default.
 *
 * Why 32-bit halves: the hash runs per request (hash buckets, GSLB), and BigInt arithmetic
 * allocates on every operation. Every 64-bit value here is a (hi, lo) pair of uint32s kept in
 * module-level registers, so hashing allocates nothing; only `murmur3First64` builds a tuple.
 *
 *   h1 = h2 = seed
 *   for each 16-byte block: mix k1 (bytes 0..7, little-endian) into h1, k2 (8..15) into h2
 *   tail (0..15 bytes) mixed the same way; then h ^= len, h1 += h2, h2 += h1, fmix64 both,
 *   h1 += h2 (h2 += h1 only matters for the second word, which BFE drops)
 */

// Constants as (hi, lo) uint32 halves.
const C1_HI = 0x87c37b91;
const C1_LO = 0x114253d5;
const C2_HI = 0x4cf5ad43;
const C2_LO = 0x2745937f;
const FM1_HI = 0xff51afd7;
const FM1_LO = 0xed558ccd;
const FM2_HI = 0xc4ceb9fe;
const FM2_LO = 0x1a85ec53;
const TWO32 = 4294967296;

// Result registers of the 64-bit helpers (no tuple per operation).
let rHi = 0;
let rLo = 0;

/** 64-bit multiply modulo 2^64 of (ah, al) × (bh, bl) into (rHi, rLo). */
function mul64(ah: number, al: number, bh: number, bl: number): void {
  // Full 64-bit product of the low words from 16-bit limbs (each partial product < 2^33: exact).
  const a0 = al & 0xffff;
  const a1 = al >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const mid = a1 * b0 + a0 * b1;
  const low = a0 * b0 + (mid % 65536) * 65536;
  const carry = Math.floor(low / TWO32);
  const high = a1 * b1 + Math.floor(mid / 65536) + carry;
  rLo = low >>> 0;
  rHi = (high + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/** 64-bit rotate left by r (0 < r < 64) into (rHi, rLo). */
function rotl64(hi: number, lo: number, r: number): void {
  if (r >= 32) {
    const t = hi;
    hi = lo;
    lo = t;
    r -= 32;
  }
  if (r === 0) {
    rHi = hi >>> 0;
    rLo = lo >>> 0;
    return;
  }
  rHi = ((hi << r) | (lo >>> (32 - r))) >>> 0;
  rLo = ((lo << r) | (hi >>> (32 - r))) >>> 0;
}

/** 64-bit add modulo 2^64 into (rHi, rLo). */
function add64(ah: number, al: number, bh: number, bl: number): void {
  const lo = al + bl;
  rLo = lo >>> 0;
  rHi = (ah + bh + (lo >= TWO32 ? 1 : 0)) >>> 0;
}

/** MurmurHash3's finaliser: k ^= k >>> 33; k *= FM1; k ^= k >>> 33; k *= FM2; k ^= k >>> 33. */
function fmix64(hi: number, lo: number): void {
  lo = (lo ^ (hi >>> 1)) >>> 0;
  mul64(hi, lo, FM1_HI, FM1_LO);
  hi = rHi;
  lo = (rLo ^ (rHi >>> 1)) >>> 0;
  mul64(hi, lo, FM2_HI, FM2_LO);
  hi = rHi;
  lo = (rLo ^ (rHi >>> 1)) >>> 0;
  rHi = hi;
  rLo = lo;
}

/** Reads a little-endian uint32 from data at i, zero past the end (the tail). */
function word(data: Uint8Array, i: number, end: number): number {
  let v = 0;
  for (let b = 3; b >= 0; b--) v = v * 256 + (i + b < end ? (data[i + b] ?? 0) : 0);
  return v;
}

/** Mixes k1 into h1 state (k1 *= C1; rotl 31; *= C2). Result in (rHi, rLo). */
function mixK1(hi: number, lo: number): void {
  mul64(hi, lo, C1_HI, C1_LO);
  rotl64(rHi, rLo, 31);
  mul64(rHi, rLo, C2_HI, C2_LO);
}

/** Mixes k2 (k2 *= C2; rotl 33; *= C1). Result in (rHi, rLo). */
function mixK2(hi: number, lo: number): void {
  mul64(hi, lo, C2_HI, C2_LO);
  rotl64(rHi, rLo, 33);
  mul64(rHi, rLo, C1_HI, C1_LO);
}

/** Computes h1 of MurmurHash3_x64_128 into (rHi, rLo). */
function hashH1(data: Uint8Array, seed: number): void {
  const len = data.length;
  const blocks = len - (len % 16);
  let h1h = 0;
  let h1l = seed >>> 0;
  let h2h = 0;
  let h2l = seed >>> 0;
  for (let i = 0; i < blocks; i += 16) {
    mixK1(word(data, i + 4, len), word(data, i, len));
    h1h = (h1h ^ rHi) >>> 0;
    h1l = (h1l ^ rLo) >>> 0;
    rotl64(h1h, h1l, 27);
    add64(rHi, rLo, h2h, h2l);
    mul64(rHi, rLo, 0, 5);
    add64(rHi, rLo, 0, 0x52dce729);
    h1h = rHi;
    h1l = rLo;
    mixK2(word(data, i + 12, len), word(data, i + 8, len));
    h2h = (h2h ^ rHi) >>> 0;
    h2l = (h2l ^ rLo) >>> 0;
    rotl64(h2h, h2l, 31);
    add64(rHi, rLo, h1h, h1l);
    mul64(rHi, rLo, 0, 5);
    add64(rHi, rLo, 0, 0x38495ab5);
    h2h = rHi;
    h2l = rLo;
  }
  const rest = len - blocks;
  if (rest > 8) {
    mixK2(word(data, blocks + 12, len), word(data, blocks + 8, len));
    h2h = (h2h ^ rHi) >>> 0;
    h2l = (h2l ^ rLo) >>> 0;
  }
  if (rest > 0) {
    mixK1(word(data, blocks + 4, len), word(data, blocks, len));
    h1h = (h1h ^ rHi) >>> 0;
    h1l = (h1l ^ rLo) >>> 0;
  }
  // len < 2^32 in practice; the high half of len is 0.
  h1l = (h1l ^ len) >>> 0;
  h2l = (h2l ^ len) >>> 0;
  add64(h1h, h1l, h2h, h2l);
  h1h = rHi;
  h1l = rLo;
  add64(h2h, h2l, h1h, h1l);
  h2h = rHi;
  h2l = rLo;
  fmix64(h1h, h1l);
  h1h = rHi;
  h1l = rLo;
  fmix64(h2h, h2l);
  add64(h1h, h1l, rHi, rLo);
}

/** The first 64 bits (h1) of MurmurHash3_x64_128 as two uint32 halves, as BFE's `Sum64` returns them. */
export function murmur3First64(data: Uint8Array, seed = 0): [hi: number, lo: number] {
  hashH1(data, seed);
  return [rHi, rLo];
}

/** (hi·2^32 + lo) mod n, exact for 0 < n < 2^31 (split so every intermediate stays below 2^53). */
export function mod64(hi: number, lo: number, n: number): number {
  const h = (((hi % n) * 65536) % n) * 65536;
  return ((h % n) + (lo % n)) % n;
}

/** BFE's hash bucket of a value: murmur3 h1 (seed 0) mod `buckets` (10000 by default). Allocation-free. */
export function murmur3Bucket(data: Uint8Array, buckets = 10000): number {
  hashH1(data, 0);
  return mod64(rHi, rLo, buckets);
}

/**
 * Reference implementation with BigInt, for tests only (slow, allocates): returns [h1, h2] of
 * MurmurHash3_x64_128.
 */
export function murmur3x64_128Big(data: Uint8Array, seed = 0): [h1: bigint, h2: bigint] {
  const M = (1n << 64n) - 1n;
  const c1 = 0x87c37b91114253d5n;
  const c2 = 0x4cf5ad432745937fn;
  const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M;
  const fmix = (k: bigint): bigint => {
    k ^= k >> 33n;
    k = (k * 0xff51afd7ed558ccdn) & M;
    k ^= k >> 33n;
    k = (k * 0xc4ceb9fe1a85ec53n) & M;
    return k ^ (k >> 33n);
  };
  const read = (from: number, to: number): bigint => {
    let v = 0n;
    for (let i = Math.min(to, data.length) - 1; i >= from; i--) v = (v << 8n) | BigInt(data[i] ?? 0);
    return v;
  };
  let h1 = BigInt(seed >>> 0);
  let h2 = h1;
  const blocks = data.length - (data.length % 16);
  for (let i = 0; i < blocks; i += 16) {
    const k1 = (rotl((read(i, i + 8) * c1) & M, 31n) * c2) & M;
    h1 = (((rotl(h1 ^ k1, 27n) + h2) & M) * 5n + 0x52dce729n) & M;
    const k2 = (rotl((read(i + 8, i + 16) * c2) & M, 33n) * c1) & M;
    h2 = (((rotl(h2 ^ k2, 31n) + h1) & M) * 5n + 0x38495ab5n) & M;
  }
  const rest = data.length - blocks;
  if (rest > 8) h2 ^= (rotl((read(blocks + 8, blocks + 16) * c2) & M, 33n) * c1) & M;
  if (rest > 0) h1 ^= (rotl((read(blocks, blocks + 8) * c1) & M, 31n) * c2) & M;
  const len = BigInt(data.length);
  h1 ^= len;
  h2 ^= len;
  h1 = (h1 + h2) & M;
  h2 = (h2 + h1) & M;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 = (h1 + h2) & M;
  h2 = (h2 + h1) & M;
  return [h1, h2];
}
