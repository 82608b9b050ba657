/**
 * The client side of a per-request connection (per-request.ts): what the client sends is framed
 * into heads and bodies and written to the current link, and the client is read only while
 * that can go on.
 *
 *   'data' ─► pending + chunk ─► frame ─► head ─► route (per-request-route.ts) ─► body ─► flush
 *                                  ▲                                                      │
 *                                  └────────────── body done: requestSent ◄───────────────┘
 *   (while a response is awaited, bytes are held in `pending` and framed once it is complete)
 *
 * 1. Bytes are framed before they are written: [from, off) of a buffer is framed and still to be
 *    forwarded, and goes out in one write per read (the whole buffer when it all belongs).
 * 2. While a response is awaited the client is still read into `pending`, up to maxHeaderBytes,
 *    then paused; a full upstream socket pauses the client until its 'drain'.
 */
import { isPeerError, isSwitchboardError } from '../../src/base/errors.ts';
import { GrowBuffer } from '../../src/peek/grow-buffer.ts';
import type { Http1Head } from '../../src/peek/http1.ts';
import { releaseHeadScanner, takeHeadScanner } from '../../src/peek/scanner-spares.ts';
import type { PerRequestDriver } from './per-request.ts';
import { bodyError, close, refuse } from './per-request-end.ts';
import { requestSent } from './per-request-exchange.ts';
import { route } from './per-request-route.ts';

/** The client's 'data' listener. */
export function onData(d: PerRequestDriver, chunk: Buffer): void {
  let buf = chunk;
  if (d.pending !== undefined) {
    if (d.carry === undefined || d.carried !== d.pending) {
      d.carry = new GrowBuffer(d.s.engine.limits.maxHeaderBytes);
      d.carry.append(d.pending);
    }
    buf = d.carried = d.carry.append(chunk);
    d.pending = undefined;
  }
  if (d.state === 'head' || d.state === 'body') frame(d, buf, 0, 0);
  else if (d.state !== 'closing') d.pending = buf; // paused states: kept for later
  if (d.carry !== undefined && d.pending !== d.carried) {
    d.carry = undefined;
    d.carried = undefined;
  }
  flow(d);
}

/** Frames `buf` from `off`; bytes [from, off) are already framed and still to be forwarded. */
export function frame(d: PerRequestDriver, buf: Buffer, off: number, from: number): void {
  for (;;) {
    if (d.state === 'body') {
      const body = d.body!;
      if (!body.done && off < buf.length) {
        try {
          off += body.feed(buf, off);
        } catch (e) {
          if (!isSwitchboardError(e)) throw e;
          bodyError(d, e.message);
          return;
        }
      }
      if (!body.done) break;
      flush(d, buf, from, off);
      from = off;
      requestSent(d);
      continue;
    }
    if (d.state !== 'head') {
      if (off < buf.length && d.state !== 'closing') d.pending = buf.subarray(off);
      break;
    }
    if (off >= buf.length) break;
    const view = off === 0 ? buf : buf.subarray(off);
    let head: Http1Head | undefined;
    const { limits } = d.s.engine;
    const scanner =
      d.scanner ?? takeHeadScanner(limits.maxHeaderBytes, d.s.listener.pathNormalization, limits.maxHeaderCount);
    d.scanner = undefined;
    try {
      head = scanner.feed(view);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      // Everything read of a head that cannot be parsed belongs to it (bytesIn).
      refuse(d, isPeerError(e) ? e.result : 'bad_request', e.message, view.length);
      return;
    }
    if (head === undefined) {
      d.scanner = scanner; // the rest of the head comes in a later read
      d.pending = view;
      break;
    }
    releaseHeadScanner(scanner);
    const consumed = route(d, head, view);
    if (consumed < 0) return;
    from = off;
    off += consumed;
  }
  flush(d, buf, from, off);
}

/** Writes request bytes [from, to) to the current link, pausing the client when it is full. */
function flush(d: PerRequestDriver, buf: Buffer, from: number, to: number): void {
  if (to <= from) return;
  if (d.exchange !== undefined) d.exchange.record.bytesIn += to - from;
  const link = d.link;
  if (link === undefined || link.socket.destroyed) return;
  link.activity++;
  const ok = link.socket.write(from === 0 && to === buf.length ? buf : buf.subarray(from, to));
  if (!ok && !d.upBlocked) {
    d.upBlocked = true;
    link.socket.once('drain', d.onUpDrain);
  }
}

/** Reads from the client only while a head or body is wanted and the backend keeps up. */
export function flow(d: PerRequestDriver): void {
  const c = d.client;
  if (c.destroyed || d.state === 'tunnel') return;
  if (d.clientEnded && d.state === 'head') {
    // The client has finished sending and nothing is in flight: nothing more can come.
    close(d, d.pending === undefined ? 'ok' : 'client_closed');
    return;
  }
  // While a response is awaited the client may still be read into `pending`, up to a bound:
  // pausing and resuming the socket for every request would cost two syscalls each time.
  const state = d.state;
  const want =
    ((state === 'head' || state === 'body') && !d.upBlocked) ||
    ((state === 'wait' || state === 'connecting') && (d.pending?.length ?? 0) < d.s.engine.limits.maxHeaderBytes);
  if (want) {
    if (c.isPaused()) c.resume();
  } else if (d.state !== 'closing' && !c.isPaused()) c.pause();
}

/** The client's 'end' listener (a FIN). */
export function onEnd(d: PerRequestDriver): void {
  d.clientEnded = true;
  // A truncated body: pass the half-close on, as a splice would, and wait for the answer.
  if (d.state === 'body') d.link?.socket.end();
  flow(d);
}

/** Parses what the client sent while the last exchange was in flight. */
export function resumeParsing(d: PerRequestDriver): void {
  const pending = d.pending;
  d.pending = undefined;
  if (pending !== undefined) frame(d, pending, 0, 0);
  flow(d);
}
