/**
 * The byte layout of the shared counters' buffer, and how a rule's region is found or claimed
 * in it by every thread without a coordinator.
 *
 *   bytes
 *   [0, 16)                        header: Int32 [0] = top (the next free byte of the region area)
 *   [16, 16 + 16·D)                directory: D entries of 4 Int32 words [hi, lo, offset, kind],
 *                                  hi/lo = murmur3 (64 bits) of the region's id, probed linearly
 *   [16 + 16·D, byteLength)        regions, bump-allocated (8-byte aligned), never freed
 *
 * 1. `claimRegion(id)`: the id's hash picks the home entry; an entry whose `hi` is 0 is claimed
 *    by compare-exchange of `hi`. The claimer writes `lo` and `kind`, bump-allocates the region
 *    (a compare-exchange loop on `top`) and publishes `offset` last (`Atomics.notify`). A thread
 *    that meets its `hi` waits for `offset` (at most a second: a claimer that died meanwhile
 *    leaves FULL), then compares `lo`: equal = the same region.
 * 2. A region is zeroed memory when claimed (the buffer is never reused), so every key starts
 *    afresh. A region the buffer has no room for is published as offset −1: every thread then
 *    fails the same way for that id, and the caller gets `FULL`.
 * 3. Regions are never freed: a changed rule claims a new one and the old one stays until the
 *    buffer is replaced (README, "Shared across worker threads").
 */
import { murmur3First64 } from '../base/murmur3.ts';

/** `claimRegion`'s answer when the buffer or its directory has no room. */
export const FULL = -1;

/** What a region counts (the directory's `kind` word). */
export const RATE = 1;
export const CONCURRENCY = 2;

const TOP = 0;
const DIRECTORY = 4; // Int32 index of the first entry
const ENTRY = 4; // Int32 words per entry
const encoder = new TextEncoder();

/** Byte offset of the region area for a directory of `entries`. */
export function regionsStart(entries: number): number {
  return 16 + 16 * entries;
}

/** A buffer of `bytes` with a directory of `entries`, its `top` set to the region area. */
export function newCounterBuffer(bytes: number, entries: number): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(bytes);
  Atomics.store(new Int32Array(buffer), TOP, regionsStart(entries));
  return buffer;
}

/** Takes `bytes` (rounded up to 8) from the region area; FULL when they do not fit. */
function allocate(words: Int32Array, bytes: number): number {
  const size = (bytes + 7) & ~7;
  for (;;) {
    const top = Atomics.load(words, TOP);
    if (top + size > words.byteLength) return FULL;
    if (Atomics.compareExchange(words, TOP, top, top + size) === top) return top;
  }
}

/** The most a thread waits for a claimer to publish (a claimer that died in between): then FULL. */
const PUBLISH_WAIT_MS = 1000;

/** Waits until the claimer of entry `e` published its offset (FULL if it never does). */
function publishedOffset(words: Int32Array, e: number): number {
  for (let waited = 0; waited < PUBLISH_WAIT_MS; waited += 10) {
    const offset = Atomics.load(words, e + 2);
    if (offset !== 0) return offset;
    Atomics.wait(words, e + 2, 0, 10);
  }
  return Atomics.load(words, e + 2) || FULL;
}

/** The byte offset of region `id` (`bytes` long, of `kind`), claimed if new; FULL when no room. */
export function claimRegion(words: Int32Array, entries: number, id: string, bytes: number, kind: number): number {
  const [h, l] = murmur3First64(encoder.encode(id));
  const hi = h | 0 || 1;
  const lo = l | 0;
  for (let j = 0; j < entries; j++) {
    const e = DIRECTORY + (((h >>> 0) + j) % entries) * ENTRY;
    let seen = Atomics.load(words, e);
    if (seen === 0) {
      seen = Atomics.compareExchange(words, e, 0, hi);
      if (seen === 0) {
        Atomics.store(words, e + 1, lo);
        Atomics.store(words, e + 3, kind);
        const offset = allocate(words, bytes);
        Atomics.store(words, e + 2, offset);
        Atomics.notify(words, e + 2);
        return offset;
      }
    }
    if (seen === hi) {
      const offset = publishedOffset(words, e);
      if (Atomics.load(words, e + 1) === lo) return offset;
    }
  }
  return FULL;
}

/** The byte offset of every region of `kind` claimed so far (FULL ones left out). */
export function regionsOf(words: Int32Array, entries: number, kind: number): { offset: number }[] {
  const found: { offset: number }[] = [];
  for (let j = 0; j < entries; j++) {
    const e = DIRECTORY + j * ENTRY;
    const offset = Atomics.load(words, e + 2);
    if (Atomics.load(words, e + 3) === kind && offset > 0) found.push({ offset });
  }
  return found;
}

/** FNV-1a over the UTF-16 code units of a key: allocation-free, per request. */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The smallest power of two ≥ n (and ≥ 2). */
export function tableSize(n: number): number {
  let s = 2;
  while (s < n) s *= 2;
  return s;
}
