/**
 * An upstream socket that reads into reused buffers (net's `onread`), for a consumer that takes
 * each chunk while it is called: the splice, a per-request link (issue 18). A plain socket
 * allocates 64 KiB per read, wraps it in an ArrayBuffer and a Buffer, and pushes it through its
 * Readable to a 'data' event; here a read is one call with a chunk.
 *
 * 1. openBackend makes the socket with `ownReadsOption()` and pauses it before it connects, so
 *    nothing is read until the consumer takes it (`takeReads`) and resumes it.
 * 2. Each read calls the consumer with a chunk; the consumer returns false to stop reading
 *    (backpressure), and `socket.resume()` reads again. It calls `keep(socket)` when the chunk
 *    stays referenced after it returns (a write that has not completed refers to these bytes).
 * 3. Which buffer a read lands in: one 64 KiB buffer shared by every socket of the thread,
 *    whose reads are copied (exactly their bytes, from node's pool when small) before the
 *    consumer sees them, so it is free again at once; after a read that filled it (a large
 *    body), a 64 KiB buffer of the socket's own, whose chunks go to the consumer as they are
 *    (no copy) and which is replaced when one is kept; back to the shared one after a read that
 *    did not fill it (the socket was drained). A socket thus owns a buffer only while a large
 *    body streams through it: an idle held connection keeps none (the `idle` bench row).
 */
import type { Socket } from 'node:net';

/** Takes one read: `chunk` may be valid during the call only; false stops reading. */
export type ReadConsumer = (socket: Socket, chunk: Buffer) => boolean;

/** What a read may bring (libuv's own suggestion for a read). */
const SIZE = 64 * 1024;
/** The buffer every socket of this thread reads into while it owns none (its reads are copied). */
let shared: Buffer | undefined;

class OwnReads {
  /** The buffer of the next read: the shared one, or the socket's own (a large body). */
  buf: Buffer | undefined = undefined;
  /** Bytes of the last read. */
  last = 0;
  /** The last chunk of the socket's own buffer is still referenced: the next read needs a new one. */
  kept = false;
  consumer: ReadConsumer | undefined = undefined;
  /** Bytes read before a consumer came (a copy, or a kept buffer of the socket's own). */
  early: Buffer | undefined = undefined;

  /** The buffer of the next read (net asks once the handle exists, then after every read). */
  next(): Buffer {
    const b = this.buf;
    const kept = this.kept;
    this.kept = false;
    shared ??= Buffer.allocUnsafe(SIZE);
    // Filled: a large body streams; its reads go into a buffer of the socket's own, not copied.
    if (b !== undefined && this.last === b.length) {
      if (b === shared || kept) this.buf = Buffer.allocUnsafe(SIZE);
    } else this.buf = shared;
    return this.buf!;
  }
}

const kReads = Symbol('switchboard.ownReads');
type ReadingSocket = Socket & { [kReads]?: OwnReads };

function onRead(this: ReadingSocket, n: number, buf: Uint8Array): boolean {
  const r = this[kReads]!;
  r.last = n;
  // A read into the shared buffer is copied: the next socket's read may land there.
  const chunk = buf === shared ? Buffer.from((buf as Buffer).subarray(0, n)) : (buf as Buffer).subarray(0, n);
  const consumer = r.consumer;
  if (consumer !== undefined) return consumer(this, chunk);
  // No consumer yet (not expected: the socket stays paused until one takes it): the bytes are
  // held. A chunk of the shared buffer is a copy already; one of the socket's own keeps it.
  if (buf !== shared) r.kept = true;
  r.early = r.early === undefined ? chunk : Buffer.concat([r.early, chunk]);
  return false;
}

/** The `onread` option of a new upstream socket; `adopt` it once the socket exists. */
export function ownReadsOption(): { buffer: () => Buffer; callback: typeof onRead; reads: OwnReads } {
  const reads = new OwnReads();
  return { buffer: () => reads.next(), callback: onRead, reads };
}

/** Ties the state made by `ownReadsOption` to its socket. */
export function adopt(socket: Socket, option: { reads: OwnReads }): void {
  (socket as ReadingSocket)[kReads] = option.reads;
}

/** True when `socket` reads through this file (`takeReads` must take its reads, not a 'data' listener). */
export function hasOwnReads(socket: Socket): boolean {
  return (socket as ReadingSocket)[kReads] !== undefined;
}

/**
 * Makes `consumer` take every read of `socket` from now on; bytes read before are given to it
 * first. Returns false when the consumer stopped reading on those.
 */
export function takeReads(socket: Socket, consumer: ReadConsumer): boolean {
  const r = (socket as ReadingSocket)[kReads]!;
  r.consumer = consumer;
  const early = r.early;
  r.early = undefined;
  return early === undefined || consumer(socket, early);
}

/** Takes the consumer away: reads are held (copied) and reading stops until the next `takeReads`. */
export function releaseReads(socket: Socket): void {
  (socket as ReadingSocket)[kReads]!.consumer = undefined;
}

/** The chunk just given to the consumer stays referenced: a buffer of the socket's own is not reused. */
export function keep(socket: Socket): void {
  (socket as ReadingSocket)[kReads]!.kept = true;
}
