/**
 * HPACK header block decoder (RFC 7541), read-only: the peek decodes, never re-encodes.
 *
 * 1. A block is a sequence of representations, told apart by their first bits (§6):
 *    `1xxxxxxx` indexed, `01xxxxxx` literal with incremental indexing, `001xxxxx` dynamic table
 *    size update, `0001xxxx` literal never indexed, `0000xxxx` literal without indexing.
 * 2. Integers use an N-bit prefix plus 7-bit continuation bytes (§5.1); we stop after 4
 *    continuation bytes (values < 2^28), far above any legitimate index, length or size.
 * 3. Strings are raw or Huffman (§5.2); both become latin1 strings so every octet survives.
 * 4. The dynamic table (§2.3.2, §4) is a ring of entries, newest at index 62. Inserting evicts
 *    the oldest entries until the new one fits; an entry larger than the table empties it.
 * 5. Size updates are legal only before the first field of a block and never above the
 *    protocol limit given to the constructor (§4.2, §6.3).
 * 6. The decoded list is bounded by `maxHeaderListBytes` (name + value + 32 per field, the
 *    RFC 9113 §6.5.2 measure) so a small block cannot expand into a huge list (§7.3).
 * Any violation throws `H2PeekError` (code `SWB_ERR_H2`) with COMPRESSION_ERROR, or
 * ENHANCE_YOUR_CALM for the list budget, saying what and at which byte of the block.
 */
import { H2_ERROR, H2PeekError } from './h2-frames.ts';
import { huffmanDecode } from './hpack-huffman.ts';
import { STATIC_TABLE } from './hpack-static.ts';

/** Per-entry overhead in the table size accounting (RFC 7541 §4.1). */
const ENTRY_OVERHEAD = 32;
const STATIC_COUNT = STATIC_TABLE.length;
/** Continuation bytes allowed after a prefix: 4 × 7 bits keeps values below 2^28 + prefix. */
const MAX_INT_CONTINUATIONS = 4;

/** A stateful HPACK decoder for one direction of one connection. */
export class HpackDecoder {
  readonly #maxTableSize: number;
  #capacity: number;
  #size = 0;
  // Ring buffer of entries: #head is the newest slot, #count entries go back from it.
  #names: string[];
  #values: string[];
  #head = 0;
  #count = 0;
  #pos = 0;
  #block: Uint8Array = new Uint8Array(0);

  constructor(maxTableSize = 4096) {
    this.#maxTableSize = maxTableSize;
    this.#capacity = maxTableSize;
    const slots = Math.floor(maxTableSize / ENTRY_OVERHEAD) + 1;
    this.#names = new Array<string>(slots).fill('');
    this.#values = new Array<string>(slots).fill('');
  }

  /** Current dynamic table size in octets (§4.1). */
  get tableSize(): number {
    return this.#size;
  }

  /** Current dynamic table capacity (the last size update, initially the protocol limit). */
  get tableCapacity(): number {
    return this.#capacity;
  }

  /** Dynamic table entries, newest first (index 62 first), for inspection and tests. */
  dynamicEntries(): Array<[name: string, value: string]> {
    const out: Array<[string, string]> = [];
    for (let i = 0; i < this.#count; i++) out.push(this.#entry(i));
    return out;
  }

  /** Decodes one complete header block into [name, value] pairs, updating the dynamic table. */
  decode(block: Uint8Array, maxHeaderListBytes: number): Array<[name: string, value: string]> {
    this.#block = block;
    this.#pos = 0;
    const out: Array<[string, string]> = [];
    let listBytes = 0;
    while (this.#pos < block.length) {
      const at = this.#pos;
      const first = block[at]!;
      let field: [string, string];
      if (first & 0x80) {
        field = this.#indexed(this.#integer(7, 'indexed field index'), at);
      } else if (first & 0x40) {
        field = this.#literal(6, at);
        this.#insert(field[0], field[1]);
      } else if (first & 0x20) {
        if (out.length > 0) throw this.#error(at, 'table size update after a field');
        this.#resize(this.#integer(5, 'table size update'), at);
        continue;
      } else {
        field = this.#literal(4, at);
      }
      listBytes += field[0].length + field[1].length + ENTRY_OVERHEAD;
      if (listBytes > maxHeaderListBytes) {
        throw new H2PeekError(
          H2_ERROR.ENHANCE_YOUR_CALM,
          `hpack: byte ${at}: header list larger than ${maxHeaderListBytes} bytes`,
          'header_too_large',
        );
      }
      out.push(field);
    }
    return out;
  }

  /** Reads an integer with an N-bit prefix at the cursor (§5.1). */
  #integer(prefixBits: number, what: string): number {
    const block = this.#block;
    const at = this.#pos;
    const mask = (1 << prefixBits) - 1;
    let value = block[this.#pos++]! & mask;
    if (value < mask) return value;
    for (let i = 0; i < MAX_INT_CONTINUATIONS; i++) {
      if (this.#pos >= block.length) throw this.#error(at, `${what}: truncated integer`);
      const byte = block[this.#pos++]!;
      value += (byte & 0x7f) * 2 ** (7 * i);
      if ((byte & 0x80) === 0) return value;
    }
    throw this.#error(at, `${what}: integer too large`);
  }

  /** Reads a string literal at the cursor (§5.2). */
  #string(what: string): string {
    const block = this.#block;
    const at = this.#pos;
    if (at >= block.length) throw this.#error(at, `${what}: missing string`);
    const huffman = (block[at]! & 0x80) !== 0;
    const length = this.#integer(7, `${what} length`);
    const start = this.#pos;
    if (length > block.length - start) throw this.#error(at, `${what}: string of ${length} bytes overruns the block`);
    this.#pos = start + length;
    if (huffman) return huffmanDecode(block, start, start + length, `byte ${at}: ${what}`);
    return Buffer.from(block.buffer, block.byteOffset + start, length).toString('latin1');
  }

  /** A literal field (§6.2): indexed or literal name, then a literal value. */
  #literal(prefixBits: number, at: number): [string, string] {
    const nameIndex = this.#integer(prefixBits, 'literal name index');
    const name = nameIndex === 0 ? this.#string('literal name') : this.#lookup(nameIndex, at)[0];
    return [name, this.#string('literal value')];
  }

  /** An indexed field (§6.1): index 0 is an error. */
  #indexed(index: number, at: number): [string, string] {
    if (index === 0) throw this.#error(at, 'index 0');
    return this.#lookup(index, at);
  }

  /** Looks up an index in the static then dynamic table (§2.3.3). */
  #lookup(index: number, at: number): [string, string] {
    if (index <= STATIC_COUNT) {
      const entry = STATIC_TABLE[index - 1]!;
      return [entry[0], entry[1]];
    }
    const dynamic = index - STATIC_COUNT - 1;
    if (dynamic >= this.#count)
      throw this.#error(at, `index ${index} beyond the table (${this.#count} dynamic entries)`);
    return this.#entry(dynamic);
  }

  /** The i-th dynamic entry, 0 = newest. */
  #entry(i: number): [string, string] {
    const slot = (this.#head - i + this.#names.length) % this.#names.length;
    return [this.#names[slot]!, this.#values[slot]!];
  }

  /** Adds an entry, evicting the oldest ones to make room (§4.4). */
  #insert(name: string, value: string): void {
    const size = name.length + value.length + ENTRY_OVERHEAD;
    if (size > this.#capacity) {
      this.#count = 0;
      this.#size = 0;
      return;
    }
    this.#evictTo(this.#capacity - size);
    this.#head = (this.#head + 1) % this.#names.length;
    this.#names[this.#head] = name;
    this.#values[this.#head] = value;
    this.#count++;
    this.#size += size;
  }

  /** Applies a dynamic table size update (§4.3, §6.3). */
  #resize(capacity: number, at: number): void {
    if (capacity > this.#maxTableSize) {
      throw this.#error(at, `table size update to ${capacity} above the limit ${this.#maxTableSize}`);
    }
    this.#capacity = capacity;
    this.#evictTo(capacity);
  }

  /** Drops the oldest entries until the table size is at most `limit`. */
  #evictTo(limit: number): void {
    while (this.#size > limit && this.#count > 0) {
      const [name, value] = this.#entry(this.#count - 1);
      this.#size -= name.length + value.length + ENTRY_OVERHEAD;
      this.#count--;
    }
  }

  #error(at: number, why: string): H2PeekError {
    return new H2PeekError(H2_ERROR.COMPRESSION_ERROR, `hpack: byte ${at}: ${why}`);
  }
}
