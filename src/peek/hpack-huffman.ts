/**
 * HPACK Huffman decoding (RFC 7541 §5.2, Appendix B).
 *
 * 1. The code table below is Appendix B: for each of the 257 symbols (256 octets + EOS), its
 *    code (LSB-aligned) and its length in bits.
 * 2. At load time the codes are inserted into a binary tree whose 256 internal nodes become the
 *    states of a 4-bit-at-a-time automaton: for every (state, nibble) we precompute the next
 *    state, the symbol emitted on the way (at most one: the shortest code is 5 bits) and whether
 *    the walk ran into EOS.
 * 3. Decoding is then one table lookup per nibble. At the end the state must sit on the
 *    all-ones spine of the tree at depth ≤ 7 (the padding rule of §5.2); anything else, or an
 *    EOS inside the string, is a decoding error.
 */
import { H2_ERROR, H2PeekError } from './h2-frames.ts';

/** Appendix B codes, LSB-aligned, indexed by symbol (256 = EOS). */
// biome-ignore format: one row per 8 symbols, first symbol in the comment
export const HUFFMAN_CODES: readonly number[] = [
  0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7, // 0
  0xfffffe8, 0xffffea, 0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec, // 8
  0xfffffed, 0xfffffee, 0xfffffef, 0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3, // 16
  0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7, 0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb, // 24
  0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa, // 32
  0x3fa, 0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18, // 40
  0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, // 48
  0x1e, 0x1f, 0x5c, 0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc, // 56
  0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, // 64
  0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, // 72
  0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, // 80
  0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0, 0x1ffc, 0x3ffc, 0x22, // 88
  0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26, // 96
  0x27, 0x6, 0x74, 0x75, 0x28, 0x29, 0x2a, 0x7, // 104
  0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78, // 112
  0x79, 0x7a, 0x7b, 0x7ffe, 0x7fc, 0x3ffd, 0x1ffd, 0xffffffc, // 120
  0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5, 0x7fffd9, // 128
  0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb, 0x7fffdf, // 136
  0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3, // 144
  0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6, 0x7fffe7, 0xffffef, // 152
  0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde, // 160
  0x7fffea, 0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec, // 168
  0x1fffe0, 0x1fffe1, 0x3fffe0, 0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef, // 176
  0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0, 0x3fffe5, 0x3fffe6, 0x7ffff1, // 184
  0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec, // 192
  0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf, 0x3ffffe5, 0xfffff1, 0x1ffffed, // 200
  0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2, 0xfffff2, // 208
  0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5, // 216
  0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3, // 224
  0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4, // 232
  0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea, // 240
  0x7ffffeb, 0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee, // 248
  0x3fffffff, // 256
];

/** Appendix B code lengths in bits, indexed by symbol (256 = EOS). */
// biome-ignore format: one row per 16 symbols, first symbol in the comment
export const HUFFMAN_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 16
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, // 32
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, // 48
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // 64
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, // 80
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, // 96
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, // 112
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240
  30, // 256
];

const EOS = 256;
// Transition entry layout: bits 0-7 next state, 8-16 symbol, bit 17 emits, bit 18 hit EOS.
const EMIT = 1 << 17;
const FAIL = 1 << 18;

/** Builds the tree: children[2n], children[2n+1] are node n's 0/1 children (leaf = ~symbol). */
function buildTree(): Int32Array {
  const children = new Int32Array(512).fill(0);
  let nodes = 1;
  for (let sym = 0; sym <= EOS; sym++) {
    const code = HUFFMAN_CODES[sym]!;
    const len = HUFFMAN_LENGTHS[sym]!;
    let node = 0;
    for (let i = len - 1; i > 0; i--) {
      const slot = node * 2 + ((code >>> i) & 1);
      if (children[slot] === 0) children[slot] = nodes++;
      node = children[slot]!;
    }
    children[node * 2 + (code & 1)] = ~sym;
  }
  return children;
}

/** Precomputes the nibble automaton and the per-state "valid end" flags. */
function buildAutomaton(): { table: Int32Array; accept: Uint8Array } {
  const children = buildTree();
  const table = new Int32Array(256 * 16);
  for (let state = 0; state < 256; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let entry = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const next = children[node * 2 + ((nibble >>> bit) & 1)]!;
        if (next >= 0) {
          node = next;
          continue;
        }
        if (~next === EOS) entry |= FAIL;
        entry |= EMIT | (~next << 8);
        node = 0;
      }
      table[state * 16 + nibble] = entry | node;
    }
  }
  // A string may end on the root or on the all-ones path of depth 1..7 (padding = EOS prefix).
  const accept = new Uint8Array(256);
  let node = 0;
  for (let depth = 0; depth <= 7; depth++) {
    accept[node] = 1;
    node = children[node * 2 + 1]!;
  }
  return { table, accept };
}

const { table: TABLE, accept: ACCEPT } = buildAutomaton();

/** Decodes Huffman-coded octets `src[start, end)` to a latin1 string; a bad code throws H2PeekError (COMPRESSION_ERROR). */
export function huffmanDecode(src: Uint8Array, start: number, end: number, where: string): string {
  // Every symbol is at least 5 bits, so the output is never longer than 8/5 of the input.
  const out = new Uint8Array(Math.ceil(((end - start) * 8) / 5));
  let n = 0;
  let state = 0;
  for (let i = start; i < end; i++) {
    const byte = src[i]!;
    let entry = TABLE[state * 16 + (byte >>> 4)]!;
    if ((entry & FAIL) !== 0) throw huffmanError(where, 'eos symbol in string');
    if ((entry & EMIT) !== 0) out[n++] = (entry >>> 8) & 0xff;
    state = entry & 0xff;
    entry = TABLE[state * 16 + (byte & 0x0f)]!;
    if ((entry & FAIL) !== 0) throw huffmanError(where, 'eos symbol in string');
    if ((entry & EMIT) !== 0) out[n++] = (entry >>> 8) & 0xff;
    state = entry & 0xff;
  }
  if (ACCEPT[state] !== 1) throw huffmanError(where, 'padding is not a short all-ones eos prefix');
  return Buffer.from(out.buffer, 0, n).toString('latin1');
}

function huffmanError(where: string, why: string): H2PeekError {
  return new H2PeekError(H2_ERROR.COMPRESSION_ERROR, `hpack: ${where}: huffman: ${why}`);
}
