/**
 * An upstream socket that reads into a buffer of its own, reused from read to read (net's
 * `onread`), for a consumer that takes each chunk while it is called: the splice (issue 18). A
 * plain socket allocates 64 KiB per read, wraps it in an ArrayBuffer and a Buffer, and pushes it
 * through its Readable to a 'data' event; here a read is one call with a view.
 *
 * 1. openBackend makes the socket with `ownReadsOption()` and pauses it before it connects, so
 *    nothing is read until the consumer takes it (`takeReads`) and resumes it.
 * 2. Each read calls the consumer with a view of the buffer, valid during the call only. The
 *    consumer returns false to stop reading (backpressure); `socket.resume()` reads again. It
 *    calls `keep(socket)` when the view stays referenced after it returns (a write that has not
 *    completed refers to these bytes): the next read then gets a new buffer.
 * 3. Sizes: 2 KiB, a slice of node's shared allocation pool (a small response fits, and four
 *    connections share one 8 KiB allocation); 64 KiB after a read that filled the buffer (a
 *    large body); 2 KiB again after a read that did not (the socket was drained: the response
 *    has likely ended). A connection that goes quiet so holds a small buffer, not a large one:
 *    an idle held connection costs what a plain socket's does (the `idle` bench row).
 * 4. Bytes read while no consumer is there (not expected: the socket is paused until one is) are
 *    copied and handed to the consumer first when it comes: nothing is lost.
 */
import type { Socket } from 'node:net';

/** Under Buffer.poolSize / 2: allocUnsafe slices node's shared pool. */
const SMALL = 2 * 1024;
const LARGE = 64 * 1024;

/** Takes one read: `chunk` is valid during the call only; false stops reading. */
export type ReadConsumer = (socket: Socket, chunk: Buffer) => boolean;

class OwnReads {
  buf: Buffer | undefined = undefined;
  /** Bytes of the last read. */
  last = 0;
  /** The last chunk is still referenced: the next read needs a new buffer. */
  kept = false;
  consumer: ReadConsumer | undefined = undefined;
  /** Bytes read before a consumer came (copied). */
  early: Buffer | undefined = undefined;

  /** The buffer of the next read (net asks once the handle exists, then after every read). */
  next(): Buffer {
    const b = this.buf;
    const size = b !== undefined && this.last === b.length ? LARGE : SMALL;
    if (b === undefined || this.kept || b.length !== size) this.buf = Buffer.allocUnsafe(size);
    this.kept = false;
    return this.buf!;
  }
}

const kReads = Symbol('switchboard.ownReads');
type ReadingSocket = Socket & { [kReads]?: OwnReads };

function onRead(this: ReadingSocket, n: number, buf: Uint8Array): boolean {
  const r = this[kReads]!;
  r.last = n;
  const chunk = (buf as Buffer).subarray(0, n);
  const consumer = r.consumer;
  if (consumer !== undefined) return consumer(this, chunk);
  r.early = r.early === undefined ? Buffer.from(chunk) : Buffer.concat([r.early, chunk]);
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

/** True when `socket` reads into its own buffer (a consumer must take its reads). */
export function readsOwnBuffer(socket: Socket): boolean {
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

/** The chunk just given to the consumer stays referenced: the next read gets a new buffer. */
export function keep(socket: Socket): void {
  (socket as ReadingSocket)[kReads]!.kept = true;
}
