/**
 * Sorted CIDR entries into disjoint, ascending ranges (cidr-set.ts step 2), a span at a time so
 * a long list can be merged in slices:
 *
 * - IPv4: keys `start × 64 + prefix` (a Float64Array), sorted natively: start first, then the
 *   wider block first; `V4Ranges` merges each into the last range when it starts within it.
 * - IPv6: a flat list of 5 numbers per entry (4 words of the start, then the prefix); entry
 *   offsets are sorted by `v6Order` and `V6Ranges` merges them (four words per start and end).
 */
import { RUN, sortInSlices } from './sort-in-slices.ts';
import type { TimeSlices } from './time-slices.ts';

/** Step 2 for IPv4: sorted keys (by start, then wider first) into merged ranges, a span at a time. */
export class V4Ranges {
  readonly #starts: Uint32Array;
  readonly #ends: Uint32Array;
  #n = 0;
  constructor(size: number) {
    this.#starts = new Uint32Array(size);
    this.#ends = new Uint32Array(size);
  }

  /** Takes `sorted[from, to)`. */
  add(sorted: Float64Array, from: number, to: number): void {
    const starts = this.#starts;
    const ends = this.#ends;
    let n = this.#n;
    for (let i = from; i < to; i++) {
      const key = sorted[i] as number;
      const prefix = key % 64;
      const start = (key - prefix) / 64;
      const end = start + 2 ** (32 - prefix) - 1;
      if (n > 0 && start <= (ends[n - 1] as number)) {
        if (end > (ends[n - 1] as number)) ends[n - 1] = end;
      } else {
        starts[n] = start;
        ends[n] = end;
        n++;
      }
    }
    this.#n = n;
  }

  result(): [Uint32Array, Uint32Array] {
    return [this.#starts.slice(0, this.#n), this.#ends.slice(0, this.#n)];
  }
}

/** Orders IPv6 entries (offsets into the flat list) by start, then wider first. */
function v6Order(flat: readonly number[]): (x: number, y: number) => number {
  return (x, y) => {
    for (let w = 0; w < 4; w++) {
      const d = (flat[x + w] as number) - (flat[y + w] as number);
      if (d !== 0) return d;
    }
    return (flat[x + 4] as number) - (flat[y + 4] as number);
  };
}

/** The offsets of the flat list's entries (5 numbers each), in list order. */
function v6Offsets(flat: readonly number[]): Uint32Array {
  const order = new Uint32Array(flat.length / 5);
  for (let i = 0; i < order.length; i++) order[i] = i * 5;
  return order;
}

/** Step 2 for IPv6 at once (inline lists): sort entry offsets by start and merge overlaps. */
export function mergeV6(flat: readonly number[]): [Uint32Array, Uint32Array] {
  const order = v6Offsets(flat).sort(v6Order(flat));
  const ranges = new V6Ranges(order.length);
  ranges.add(flat, order, 0, order.length);
  return ranges.result();
}

/**
 * Step 2 for IPv6 in slices (long list files): runs of `RUN` offsets sorted by comparison, merged
 * pairwise (sort-in-slices.ts), then turned into ranges, pausing between slices.
 */
export async function mergeV6InSlices(
  flat: readonly number[],
  slices: TimeSlices,
): Promise<[Uint32Array, Uint32Array]> {
  const src = await sortInSlices(v6Offsets(flat), slices, v6Order(flat));
  const n = src.length;
  const ranges = new V6Ranges(n);
  for (let i = 0; i < n; i += RUN) {
    ranges.add(flat, src, i, Math.min(n, i + RUN));
    await slices.pause();
  }
  return ranges.result();
}

/** Sorted IPv6 entries into merged ranges (four words per start and end), a span at a time. */
class V6Ranges {
  readonly #starts: Uint32Array;
  readonly #ends: Uint32Array;
  /** Words written (4 per range). */
  #n = 0;
  constructor(entries: number) {
    this.#starts = new Uint32Array(entries * 4);
    this.#ends = new Uint32Array(entries * 4);
  }

  /** Takes the entries at `order[from, to)` of `flat`. */
  add(flat: readonly number[], order: Uint32Array, from: number, to: number): void {
    const starts = this.#starts;
    const ends = this.#ends;
    const end = [0, 0, 0, 0];
    for (let i = from; i < to; i++) {
      const at = order[i] as number;
      const prefix = flat[at + 4] as number;
      for (let w = 0; w < 4; w++) {
        const bits = Math.max(0, Math.min(32, prefix - w * 32));
        const v = flat[at + w] as number;
        end[w] = bits === 32 ? v : (v | (bits === 0 ? 0xffffffff : 0xffffffff >>> bits)) >>> 0;
      }
      const last = this.#n - 4;
      if (last >= 0 && compareAt(flat, at, ends, last) <= 0) {
        if (compareWords(end, ends, last) > 0) ends.set(end, last);
      } else {
        for (let w = 0; w < 4; w++) starts[this.#n + w] = flat[at + w] as number;
        ends.set(end, this.#n);
        this.#n += 4;
      }
    }
  }

  result(): [Uint32Array, Uint32Array] {
    return [this.#starts.slice(0, this.#n), this.#ends.slice(0, this.#n)];
  }
}

/** Compares the 4-word start at `flat[at..at+3]` with `t[i..i+3]`. */
function compareAt(flat: readonly number[], at: number, t: Uint32Array, i: number): number {
  for (let w = 0; w < 4; w++) {
    const d = (flat[at + w] as number) - (t[i + w] as number);
    if (d !== 0) return d;
  }
  return 0;
}

/** Compares a 4-word value with `t[i..i+3]`. */
function compareWords(a: readonly number[], t: Uint32Array, i: number): number {
  for (let w = 0; w < 4; w++) {
    const d = (a[w] as number) - (t[i + w] as number);
    if (d !== 0) return d;
  }
  return 0;
}
