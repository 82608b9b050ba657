/**
 * A set of CIDR blocks whose lookup does not grow with the list: sorted, merged ranges and a
 * binary search (log2 of 1,000,000 is 20 steps).
 *
 *   IPv4: starts[i], ends[i]           one 32-bit word each (Uint32Array)
 *   IPv6: starts[4i..4i+3], ends[…]    four 32-bit words each, big-endian order
 *
 * 1. Entries are added one at a time (`CidrSetBuilder.add`): an address (a /32 or /128) or
 *    `addr/prefix`, parsed into the 16-byte form of src/base/ip.ts; an IPv4-mapped IPv6 address
 *    is IPv4. IPv4 and IPv6 live in separate tables, so families never mix (ip.ts rule 3).
 * 2. `build()` sorts each table by start (IPv4 as one Float64Array of start × 64 + prefix,
 *    sorted natively; IPv6 by comparison), then merges overlapping ranges, so the ranges are
 *    disjoint and ascending (cidr-ranges.ts). `buildInSlices()` does the same for a long list
 *    without holding the event loop: runs of 16,384 keys sorted (IPv4 natively, IPv6 by
 *    comparison), merged pairwise in slices (sort-in-slices.ts).
 * 3. `has(ip)` parses the address into a shared buffer (no allocation), finds the last range
 *    starting at or before it, and checks its end.
 */
import { parseIpInto } from '../../src/base/ip.ts';
import { mergeV6, mergeV6InSlices, V4Ranges } from './cidr-ranges.ts';
import { RUN, sortInSlices } from './sort-in-slices.ts';
import type { TimeSlices } from './time-slices.ts';

const scratch = new Uint8Array(16);

/** Big-endian 32-bit word `w` (0–3) of a 16-byte form. */
function word(b: Uint8Array, w: number): number {
  const i = w * 4;
  return (((b[i] ?? 0) << 24) | ((b[i + 1] ?? 0) << 16) | ((b[i + 2] ?? 0) << 8) | (b[i + 3] ?? 0)) >>> 0;
}

/** An immutable set of address ranges. */
export class CidrSet {
  readonly #v4Starts: Uint32Array;
  readonly #v4Ends: Uint32Array;
  readonly #v6Starts: Uint32Array;
  readonly #v6Ends: Uint32Array;

  constructor(v4Starts: Uint32Array, v4Ends: Uint32Array, v6Starts: Uint32Array, v6Ends: Uint32Array) {
    this.#v4Starts = v4Starts;
    this.#v4Ends = v4Ends;
    this.#v6Starts = v6Starts;
    this.#v6Ends = v6Ends;
  }

  /** The range tables, to send to another thread (cidr-list-load.ts) and rebuild there. */
  tables(): { v4Starts: Uint32Array; v4Ends: Uint32Array; v6Starts: Uint32Array; v6Ends: Uint32Array } {
    return { v4Starts: this.#v4Starts, v4Ends: this.#v4Ends, v6Starts: this.#v6Starts, v6Ends: this.#v6Ends };
  }

  /** Disjoint ranges held (after merging). */
  get size(): number {
    return this.#v4Starts.length + this.#v6Starts.length / 4;
  }

  /** True when the address lies in some block; false for text that is not an address. */
  has(ip: string): boolean {
    const family = parseIpInto(ip, scratch);
    if (family === 4) return this.#hasV4(word(scratch, 3));
    if (family === 6) return this.#hasV6(scratch);
    return false;
  }

  #hasV4(a: number): boolean {
    const starts = this.#v4Starts;
    let lo = 0;
    let hi = starts.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((starts[mid] as number) <= a) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at >= 0 && a <= (this.#v4Ends[at] as number);
  }

  #hasV6(b: Uint8Array): boolean {
    const a0 = word(b, 0);
    const a1 = word(b, 1);
    const a2 = word(b, 2);
    const a3 = word(b, 3);
    const starts = this.#v6Starts;
    let lo = 0;
    let hi = starts.length / 4 - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (compare4(starts, mid * 4, a0, a1, a2, a3) <= 0) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at >= 0 && compare4(this.#v6Ends, at * 4, a0, a1, a2, a3) >= 0;
  }
}

/** Compares the 4 words at `t[i..i+3]` with (a0..a3). */
function compare4(t: Uint32Array, i: number, a0: number, a1: number, a2: number, a3: number): number {
  return (t[i] as number) - a0 || (t[i + 1] as number) - a1 || (t[i + 2] as number) - a2 || (t[i + 3] as number) - a3;
}

/** Collects entries, then sorts and merges them into a `CidrSet`. */
export class CidrSetBuilder {
  #v4 = new Float64Array(1024); // start × 64 + prefix: exact in a double (38 bits)
  #v4n = 0;
  #v6: number[] = []; // 4 words of the start, then the prefix, per entry

  /** Adds `addr` or `addr/prefix`; false when the text is neither (nothing added). */
  add(text: string): boolean {
    const slash = text.indexOf('/');
    const family = parseIpInto(slash < 0 ? text : text.slice(0, slash), scratch);
    if (family === 0) return false;
    const max = family === 4 ? 32 : 128;
    let prefix = max;
    if (slash >= 0) {
      const digits = text.slice(slash + 1);
      if (!/^(0|[1-9][0-9]{0,2})$/.test(digits)) return false;
      prefix = Number(digits);
      if (prefix > max) return false;
    }
    if (family === 4) {
      const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
      this.#pushV4(((word(scratch, 3) & mask) >>> 0) * 64 + prefix);
    } else {
      for (let w = 0; w < 4; w++) {
        const bits = Math.max(0, Math.min(32, prefix - w * 32));
        const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
        this.#v6.push((word(scratch, w) & mask) >>> 0);
      }
      this.#v6.push(prefix);
    }
    return true;
  }

  /**
   * Adds the entry `text[start, end)` (already trimmed); false when it is not an address or
   * CIDR. Dotted IPv4 is parsed in place (no substring); anything else goes through `add`.
   */
  addSpan(text: string, start: number, end: number): boolean {
    let value = 0;
    let octet = 0;
    let digits = 0;
    let dots = 0;
    let i = start;
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x30 && c <= 0x39) {
        // Not a dotted quad's octet (a leading zero, over 255, or an IPv6 group such as 2001):
        // the full parser decides (ip.ts rule 4 refuses leading zeros in IPv4).
        if ((digits > 0 && octet === 0) || octet * 10 + (c - 0x30) > 255) return this.add(text.slice(start, end));
        octet = octet * 10 + (c - 0x30);
        digits++;
      } else if (c === 0x2e && digits > 0 && dots < 3) {
        value = value * 256 + octet;
        octet = 0;
        digits = 0;
        dots++;
      } else break;
    }
    if (dots !== 3 || digits === 0 || (i < end && text.charCodeAt(i) !== 0x2f)) return this.add(text.slice(start, end));
    value = value * 256 + octet;
    let prefix = 32;
    if (i < end) {
      const digitsAt = i + 1;
      if (digitsAt === end || end - digitsAt > 2 || (end - digitsAt === 2 && text.charCodeAt(digitsAt) === 0x30))
        return false;
      prefix = 0;
      for (let j = digitsAt; j < end; j++) {
        const c = text.charCodeAt(j);
        if (c < 0x30 || c > 0x39) return false;
        prefix = prefix * 10 + (c - 0x30);
      }
      if (prefix > 32) return false;
    }
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    this.#pushV4(((value & mask) >>> 0) * 64 + prefix);
    return true;
  }

  #pushV4(key: number): void {
    if (this.#v4n === this.#v4.length) {
      const grown = new Float64Array(this.#v4.length * 2);
      grown.set(this.#v4);
      this.#v4 = grown;
    }
    this.#v4[this.#v4n++] = key;
  }

  /** Entries added so far. */
  get count(): number {
    return this.#v4n + this.#v6.length / 5;
  }

  /** Sorts and merges at once (inline lists, tests). */
  build(): CidrSet {
    const keys = this.#v4.subarray(0, this.#v4n).sort();
    const ranges = new V4Ranges(keys.length);
    ranges.add(keys, 0, keys.length);
    return this.#done(...ranges.result(), mergeV6(this.#v6));
  }

  /**
   * Sorts and merges in slices (long list files): runs of `RUN` keys sorted natively (IPv6: by
   * comparison), then merged pairwise, then turned into ranges, pausing between slices.
   */
  async buildInSlices(slices: TimeSlices): Promise<CidrSet> {
    const keys = await sortInSlices(this.#v4.subarray(0, this.#v4n), slices);
    const ranges = new V4Ranges(keys.length);
    for (let i = 0; i < keys.length; i += RUN) {
      ranges.add(keys, i, Math.min(keys.length, i + RUN));
      await slices.pause();
    }
    return this.#done(...ranges.result(), await mergeV6InSlices(this.#v6, slices));
  }

  #done(v4Starts: Uint32Array, v4Ends: Uint32Array, [v6Starts, v6Ends]: [Uint32Array, Uint32Array]): CidrSet {
    this.#v4 = new Float64Array(0);
    this.#v4n = 0;
    this.#v6 = [];
    return new CidrSet(v4Starts, v4Ends, v6Starts, v6Ends);
  }
}
