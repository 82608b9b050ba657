/**
 * Splicing two sockets both ways with backpressure, half-close and an idle timeout.
 *
 *   client ──data──► upstream.write    a write that returns false pauses the source until the
 *   client ◄──data── client.write      destination drains; an 'end' on one side ends the other
 *                                      (half-close: allowHalfOpen is set on both sockets)
 *
 * 1. Each direction is one 'data' listener that writes the chunk on and pauses on backpressure,
 *    plus one 'drain' listener that resumes: no per-chunk closures and none of pipe()'s
 *    bookkeeping (its per-chunk state checks and its eight listeners per direction). The
 *    listeners are shared by all splices (the state is one `Splice` object per connection).
 * 2. The idle timeout does not refresh a timer per chunk (socket.setTimeout does, on both sides,
 *    for every read and write). A chunk only bumps a counter; one deadline per splice, on a timer
 *    shared by all splices (src/base/deadline.ts), wakes every idleTimeout / IDLE_TICKS and ends the
 *    splice after IDLE_TICKS quiet ticks in a row, so a silent connection closes between
 *    idleTimeout and idleTimeout × (1 + 1 / IDLE_TICKS).
 * 3. An error on one side destroys both (STYLE §13); a close without an error ends the other
 *    once its writes have flushed. `onDone` runs once, after both sockets have closed, with why
 *    the splice ended (and, for an error or a timeout, a reason for the access line: the
 *    error's message, such as the listener pipeline's `half-close timeout`).
 * 4. An upstream socket opened for a splice reads into reused buffers (src/data-path/own-reads.ts): its
 *    reads come to `upstreamChunk` instead of a 'data' listener, and a write that does not
 *    complete at once keeps the buffer it refers to.
 * 5. An optional `ClientFilter` sits on the client → upstream direction (the peeked bytes
 *    included) until it says `done`; then its 'data' listener is swapped for the plain one. The
 *    one user: h2c on the net panel, which cuts the client's ACK of the router's SETTINGS
 *    (src/data-path/h2c-settings-ack.ts). Another may sit on the upstream → client direction the same
 *    way (h2c: the backend's ACKs of what the router answered before routing,
 *    src/data-path/h2c-backend-acks.ts); without one, the upstream listeners are the plain ones.
 */
import type { Socket } from 'node:net';
import { arm, Deadline, disarm } from '../base/deadline.ts';
import { hasOwnReads, keep, takeReads } from './own-reads.ts';

export type SpliceEnd = 'ok' | 'idle_timeout' | 'client_error' | 'upstream_error';

/** How a splice ended, and why when it was not `ok` (the access line's reason). */
export type SpliceDone = (end: SpliceEnd, reason?: string) => void;

/** A stage on the client → upstream bytes, used until it is `done` (then dropped). */
export interface ClientFilter {
  readonly done: boolean;
  /** The bytes to forward for `chunk` (may be empty). */
  push(chunk: Buffer): Buffer;
  /** Bytes still held when the client's stream ends. */
  flush(): Buffer | undefined;
}

/** Quiet ticks in a row that make a connection idle. */
const IDLE_TICKS = 4;

/**
 * One splice's state. Its sockets' listeners are shared by every splice (one function per event,
 * finding the splice in the socket's `kSplice` slot): no closure per connection (issue 18: what
 * an idle connection keeps), and no WeakMap entry per socket (a hash insert, and for a young
 * socket an ephemeron the scavenger revisits).
 */
class Splice {
  declare readonly client: Socket;
  declare readonly upstream: Socket;
  declare readonly onDone: SpliceDone;
  declare end: SpliceEnd;
  declare reason: string | undefined;
  declare open: number;
  declare activity: number;
  declare seen: number;
  declare quiet: number;
  /** The idle tick every `period` ms (a shared timer: src/base/deadline.ts); none when idleTimeout is 0. */
  declare idle: Deadline<Splice> | undefined;
  declare period: number;
  /** The filter while it is not done; `clientFiltered` reads the client until then. */
  declare stage: ClientFilter | undefined;
  /** The client's current 'data' listener. */
  declare clientListener: (this: Socket, chunk: Buffer) => void;
  /** The upstream → client filter while it is not done (`upstreamFiltered`, `upstreamChunkFiltered`). */
  declare back: ClientFilter | undefined;

  constructor(client: Socket, upstream: Socket, onDone: SpliceDone, stage: ClientFilter | undefined) {
    this.client = client;
    this.upstream = upstream;
    this.onDone = onDone;
    this.end = 'ok';
    this.reason = undefined;
    this.open = 2;
    this.activity = 0;
    this.seen = 0;
    this.quiet = 0;
    this.idle = undefined;
    this.period = 0;
    this.stage = stage;
    this.clientListener = stage === undefined ? clientData : clientFiltered;
    this.back = undefined;
  }

  fail(why: SpliceEnd, reason: string): void {
    if (this.end === 'ok') {
      this.end = why;
      this.reason = reason;
    }
    this.client.destroy();
    this.upstream.destroy();
  }

  closed(): void {
    if (--this.open > 0) return;
    if (this.idle !== undefined) disarm(this.idle);
    this.onDone(this.end, this.reason);
  }

  endClient(): void {
    const held = this.back?.flush();
    if (held !== undefined && held.length > 0) this.client.end(held);
    else this.client.end();
  }

  endUpstream(): void {
    const held = this.stage?.flush();
    if (held !== undefined && held.length > 0) this.upstream.end(held);
    else this.upstream.end();
  }
}

const kSplice = Symbol('switchboard.splice');
type Spliced = Socket & { [kSplice]?: Splice };

/** The splice of a socket that `splice()` took (its listeners run only on such sockets). */
function spliceOf(socket: Socket): Splice {
  return (socket as Spliced)[kSplice]!;
}

function clientData(this: Socket, chunk: Buffer): void {
  const s = spliceOf(this);
  s.activity++;
  if (!s.upstream.write(chunk)) this.pause();
}

function clientFiltered(this: Socket, chunk: Buffer): void {
  const s = spliceOf(this);
  s.activity++;
  const stage = s.stage!;
  const out = stage.push(chunk);
  if (stage.done) {
    s.stage = undefined;
    this.removeListener('data', clientFiltered);
    this.on('data', clientData);
    s.clientListener = clientData;
  }
  if (out.length > 0 && !s.upstream.write(out)) this.pause();
}

function upstreamData(this: Socket, chunk: Buffer): void {
  const s = spliceOf(this);
  s.activity++;
  if (!s.client.write(chunk)) this.pause();
}

/**
 * The upstream → client direction of an upstream socket that reads into reused buffers
 * (src/data-path/own-reads.ts): `chunk` may be a buffer's own bytes, so when the write has not completed
 * at once that buffer is kept for it and the next read gets another.
 */
function upstreamChunk(socket: Socket, chunk: Buffer): boolean {
  const s = spliceOf(socket);
  s.activity++;
  const c = s.client;
  const ok = c.write(chunk);
  if (c.writableLength === 0) return true; // all of it went out: the buffer is free again
  keep(socket);
  return ok; // false: reading stops until the client's 'drain' (clientDrain resumes it)
}

/** `upstreamData` through the `back` filter until it is done, then the plain listener. */
function upstreamFiltered(this: Socket, chunk: Buffer): void {
  const s = spliceOf(this);
  s.activity++;
  const out = s.back!.push(chunk);
  if (s.back!.done) {
    s.back = undefined;
    this.removeListener('data', upstreamFiltered);
    this.on('data', upstreamData);
  }
  if (out.length > 0 && !s.client.write(out)) this.pause();
}

/** `upstreamChunk` through the `back` filter until it is done, then the plain consumer. */
function upstreamChunkFiltered(socket: Socket, chunk: Buffer): boolean {
  const s = spliceOf(socket);
  const out = s.back!.push(chunk);
  if (s.back!.done) {
    s.back = undefined;
    takeReads(socket, upstreamChunk);
  }
  if (out.length === 0) {
    s.activity++;
    return true;
  }
  return upstreamChunk(socket, out);
}

/** Reads of an upstream whose client has closed: dropped, as 'data' with no listener is. */
function dropChunk(): boolean {
  return true;
}

function clientError(this: Socket, err: Error): void {
  spliceOf(this).fail('client_error', `client: ${err.message}`);
}

function upstreamError(this: Socket, err: Error): void {
  spliceOf(this).fail('upstream_error', `upstream: ${err.message}`);
}

function upstreamDrain(this: Socket): void {
  const s = spliceOf(this);
  s.activity++;
  s.client.resume();
}

function clientDrain(this: Socket): void {
  const s = spliceOf(this);
  s.activity++;
  s.upstream.resume();
}

function clientClose(this: Socket): void {
  const s = spliceOf(this);
  if (hasOwnReads(s.upstream)) takeReads(s.upstream, dropChunk);
  else s.upstream.removeListener('data', s.back === undefined ? upstreamData : upstreamFiltered);
  s.upstream.destroySoon();
  s.closed();
}

function upstreamClose(this: Socket): void {
  const s = spliceOf(this);
  s.client.removeListener('data', s.clientListener);
  s.client.destroySoon();
  s.closed();
}

function clientEnd(this: Socket): void {
  spliceOf(this).endUpstream();
}

function upstreamEnd(this: Socket): void {
  spliceOf(this).endClient();
}

function tick(s: Splice): void {
  if (s.activity !== s.seen) {
    s.seen = s.activity;
    s.quiet = 0;
  } else if (++s.quiet >= IDLE_TICKS) {
    s.fail('idle_timeout', 'no traffic within idleTimeout');
    return;
  }
  arm(s.idle!, s.period);
}

/**
 * Splices `client` and `upstream`; `head` (the peeked bytes) is written upstream first, through
 * `filter` when one is given; the upstream's bytes go through `back` when one is given.
 */
export function splice(
  client: Socket,
  upstream: Socket,
  head: Buffer | undefined,
  idleTimeout: number,
  onDone: SpliceDone,
  filter?: ClientFilter,
  back?: ClientFilter,
): void {
  const first = filter !== undefined && head !== undefined ? filter.push(head) : head;
  const s = new Splice(client, upstream, onDone, filter?.done ? undefined : filter);
  if (back !== undefined && !back.done) s.back = back;
  (client as Spliced)[kSplice] = s;
  (upstream as Spliced)[kSplice] = s;
  client.on('error', clientError);
  upstream.on('error', upstreamError);
  client.on('data', s.clientListener);
  // An upstream that reads into reused buffers takes no 'data' listener (src/data-path/own-reads.ts).
  let upstreamGoes = true;
  if (hasOwnReads(upstream))
    upstreamGoes = takeReads(upstream, s.back === undefined ? upstreamChunk : upstreamChunkFiltered);
  else upstream.on('data', s.back === undefined ? upstreamData : upstreamFiltered);
  upstream.on('drain', upstreamDrain);
  client.on('drain', clientDrain);
  // 'close' and 'end' come once each: `on` spares the `once` wrapper.
  client.on('close', clientClose);
  upstream.on('close', upstreamClose);
  if (idleTimeout > 0) {
    s.period = Math.max(1, Math.ceil(idleTimeout / IDLE_TICKS));
    s.idle = new Deadline(tick, s);
    arm(s.idle, s.period);
  }
  if (first !== undefined && first.length > 0) upstream.write(first);
  // Either side may have ended while the route was decided ('end' fires even while paused).
  if (client.readableEnded) s.endUpstream();
  else client.on('end', clientEnd);
  if (upstream.readableEnded) s.endClient();
  else upstream.on('end', upstreamEnd);
  // Both sockets arrive paused (peek and connect leave them so): start reading now.
  client.resume();
  if (upstreamGoes) upstream.resume(); // else the client's 'drain' resumes it
}
