/**
 * The client bytes of a per-request connection that are not framed yet: a partial head, or what
 * came while the client must wait (a response in flight, a connect).
 *
 *   read ─► withRead(chunk): pending bytes + chunk (one growing buffer while a head trickles in)
 *        ─► framed; what is left is kept (`keep`) ─► settle(): the growing buffer dropped unless
 *           what is kept is still its window
 *
 * While the pending bytes grow read by read (a trickled head), they live in one growing buffer,
 * so each byte is copied once rather than all of them on every read (issue 17 item 9). The
 * buffer is dropped as soon as the pending bytes are something else, so an idle connection
 * holds none.
 */
import { GrowBuffer } from '../../src/peek/grow-buffer.ts';

/** The unframed client bytes of one connection. */
export class PendingBytes {
  readonly #maxHeaderBytes: number;
  #bytes: Buffer | undefined;
  #carry: GrowBuffer | undefined;
  /** The window of `#carry` that `#bytes` must equal for the next read to append to it. */
  #carried: Buffer | undefined;

  constructor(maxHeaderBytes: number) {
    this.#maxHeaderBytes = maxHeaderBytes;
  }

  /** Nothing is pending. */
  get empty(): boolean {
    return this.#bytes === undefined;
  }

  /** How many bytes are pending. */
  get length(): number {
    return this.#bytes?.length ?? 0;
  }

  /** The bytes to frame for a read: the pending ones followed by `chunk` (no longer pending). */
  withRead(chunk: Buffer): Buffer {
    const pending = this.#bytes;
    if (pending === undefined) return chunk;
    if (this.#carry === undefined || this.#carried !== pending) {
      this.#carry = new GrowBuffer(this.#maxHeaderBytes);
      this.#carry.append(pending);
    }
    this.#bytes = undefined;
    this.#carried = this.#carry.append(chunk);
    return this.#carried;
  }

  /** After a read was framed: the growing buffer goes unless the pending bytes are its window. */
  settle(): void {
    if (this.#carry !== undefined && this.#bytes !== this.#carried) {
      this.#carry = undefined;
      this.#carried = undefined;
    }
  }

  /** Keeps `bytes` for later (they replace what was pending). */
  keep(bytes: Buffer): void {
    this.#bytes = bytes;
  }

  /** The pending bytes, no longer pending. */
  take(): Buffer | undefined {
    const bytes = this.#bytes;
    this.#bytes = undefined;
    return bytes;
  }
}
