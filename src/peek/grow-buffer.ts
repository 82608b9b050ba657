/**
 * The peek's one buffer: bytes appended read by read, each copied once (issue 17 item 9).
 *
 *   read 1 ──► kept as is (no copy: most heads arrive in one read)
 *   read 2 ──► store of capacity max(2 × needed, 1 KiB), capped near `limit` ──► copy 1 + 2
 *   read k ──► copied after the others; when full, the store doubles (again capped)
 *
 * A head trickled one byte per read therefore costs O(n) bytes copied and O(log n) stores,
 * where re-concatenating the whole buffer on every read (`Buffer.concat([buf, chunk])`) cost
 * O(n²). Capacity doubles up to `limit` (maxHeaderBytes: the peekers refuse beyond it, so more
 * room is rarely useful); only bytes past the limit (one read, or h2c's first HEADERS frame
 * after a full prelude) make it grow further, still by doubling.
 *
 * `view()` is a window on the store, valid until the next `append` (which may move the bytes);
 * a window handed on is never written again, since appends only write past its end or into a
 * new store.
 */

/** Counters the tests read to check that the work is linear (optional; one per peek). */
export interface PeekWork {
  /** Stores allocated. */
  allocations: number;
  /** Bytes copied into stores. */
  bytesCopied: number;
  /** Reads appended. */
  reads: number;
}

const MIN_CAPACITY = 1024;

export class GrowBuffer {
  readonly #limit: number;
  readonly #work: PeekWork | undefined;
  #store: Buffer | undefined;
  #length = 0;
  /** The first read, kept without a copy until a second one arrives. */
  #first: Buffer | undefined;

  constructor(limit: number, work?: PeekWork) {
    this.#limit = limit;
    this.#work = work;
  }

  get length(): number {
    return this.#first?.length ?? this.#length;
  }

  /** Appends one read and returns the window on every byte so far. */
  append(chunk: Buffer): Buffer {
    if (this.#work !== undefined) this.#work.reads++;
    if (chunk.length === 0) return this.view();
    if (this.#store === undefined && this.#first === undefined) {
      this.#first = chunk;
      return chunk;
    }
    const needed = this.length + chunk.length;
    if (this.#store === undefined || needed > this.#store.length) this.#grow(needed);
    const store = this.#store!;
    chunk.copy(store, this.#length);
    this.#length += chunk.length;
    this.#count(chunk.length);
    return store.subarray(0, this.#length);
  }

  /** Every byte so far (a window; see the file comment). */
  view(): Buffer {
    if (this.#first !== undefined) return this.#first;
    return this.#store === undefined ? Buffer.alloc(0) : this.#store.subarray(0, this.#length);
  }

  #grow(needed: number): void {
    const current = this.#store?.length ?? 0;
    let capacity = Math.max(current * 2, needed * 2, MIN_CAPACITY);
    // Up to the limit: no more than it. Past it (h2c's first HEADERS may follow a full prelude),
    // keep doubling so the tail is amortised too.
    if (needed <= this.#limit) capacity = Math.min(capacity, this.#limit);
    const store = Buffer.allocUnsafe(capacity);
    if (this.#work !== undefined) this.#work.allocations++;
    if (this.#first !== undefined) {
      this.#first.copy(store, 0);
      this.#length = this.#first.length;
      this.#count(this.#first.length);
      this.#first = undefined;
    } else if (this.#store !== undefined) {
      this.#store.copy(store, 0, 0, this.#length);
      this.#count(this.#length);
    }
    this.#store = store;
  }

  #count(bytes: number): void {
    if (this.#work !== undefined) this.#work.bytesCopied += bytes;
  }
}
