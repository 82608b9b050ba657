/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, RFC 3720 §B.4), table-driven.
 * `zlib.crc32` is the IEEE polynomial and gives different values, so PROXY v2 needs its own.
 */

const POLY = 0x82f63b78;

/** 256-entry lookup table, built once at load. */
const TABLE: Uint32Array = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/**
 * CRC-32C of `data[start, end)`; pass a previous result as `initial` to continue a running CRC
 * over several pieces (same chaining convention as `zlib.crc32(data, value)`).
 */
export function crc32c(data: Uint8Array, initial = 0, start = 0, end: number = data.length): number {
  let c = ~initial >>> 0;
  for (let i = start; i < end; i++) c = TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
