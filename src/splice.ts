/**
 * Splicing two sockets both ways with backpressure, half-close and an idle timeout.
 *
 *   client ──data──► upstream.write    a write that returns false pauses the source until the
 *   client ◄──data── client.write      destination drains; an 'end' on one side ends the other
 *                                      (half-close: allowHalfOpen is set on both sockets)
 *
 * 1. Each direction is one 'data' listener that writes the chunk on and pauses on backpressure,
 *    plus one 'drain' listener that resumes: no per-chunk closures and none of pipe()'s
 *    bookkeeping (its per-chunk state checks and its eight listeners per direction).
 * 2. The idle timeout does not refresh a timer per chunk (socket.setTimeout does, on both sides,
 *    for every read and write). A chunk only bumps a counter; one timer per splice wakes every
 *    idleTimeout / IDLE_TICKS and ends the splice after IDLE_TICKS quiet ticks in a row, so a
 *    silent connection closes between idleTimeout and idleTimeout × (1 + 1 / IDLE_TICKS).
 * 3. An error on one side destroys both (STYLE §13); a close without an error ends the other
 *    once its writes have flushed. `onDone` runs once, after both sockets have closed, with why
 *    the splice ended.
 * 4. An optional `ClientFilter` sits on the client → upstream direction (the peeked bytes
 *    included) until it says `done`; then its 'data' listener is swapped for the plain one. The
 *    one user: h2c on the net panel, which cuts the client's ACK of the router's SETTINGS
 *    (src/h2c-settings-ack.ts).
 */
import type { Socket } from 'node:net';

export type SpliceEnd = 'ok' | 'idle_timeout' | 'client_error' | 'upstream_error';

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
 * Splices `client` and `upstream`; `head` (the peeked bytes) is written upstream first, through
 * `filter` when one is given.
 */
export function splice(
  client: Socket,
  upstream: Socket,
  head: Buffer | undefined,
  idleTimeout: number,
  onDone: (end: SpliceEnd) => void,
  filter?: ClientFilter,
): void {
  let end: SpliceEnd = 'ok';
  let open = 2;
  let activity = 0;
  let timer: NodeJS.Timeout | undefined;
  const fail = (why: SpliceEnd) => {
    if (end === 'ok') end = why;
    client.destroy();
    upstream.destroy();
  };
  const closed = () => {
    if (--open > 0) return;
    if (timer !== undefined) clearTimeout(timer);
    onDone(end);
  };
  const toUpstream = (chunk: Buffer) => {
    activity++;
    if (!upstream.write(chunk)) client.pause();
  };
  // The filter while it is not done; `filtered` reads the client until then.
  let stage = filter;
  const first = stage !== undefined && head !== undefined ? stage.push(head) : head;
  if (stage?.done) stage = undefined;
  const filtered = (chunk: Buffer) => {
    activity++;
    const out = stage!.push(chunk);
    if (stage!.done) {
      stage = undefined;
      client.removeListener('data', filtered);
      client.on('data', toUpstream);
      onClientData = toUpstream;
    }
    if (out.length > 0 && !upstream.write(out)) client.pause();
  };
  let onClientData = stage === undefined ? toUpstream : filtered;
  const endUpstream = () => {
    const held = stage?.flush();
    if (held !== undefined && held.length > 0) upstream.end(held);
    else upstream.end();
  };
  const toClient = (chunk: Buffer) => {
    activity++;
    if (!client.write(chunk)) upstream.pause();
  };
  client.on('error', () => fail('client_error'));
  upstream.on('error', () => fail('upstream_error'));
  client.on('data', onClientData);
  upstream.on('data', toClient);
  upstream.on('drain', () => {
    activity++;
    client.resume();
  });
  client.on('drain', () => {
    activity++;
    upstream.resume();
  });
  client.once('close', () => {
    upstream.removeListener('data', toClient);
    upstream.destroySoon();
    closed();
  });
  upstream.once('close', () => {
    client.removeListener('data', onClientData);
    client.destroySoon();
    closed();
  });
  if (idleTimeout > 0) {
    let seen = activity;
    let quiet = 0;
    const tick = () => {
      if (activity !== seen) {
        seen = activity;
        quiet = 0;
      } else if (++quiet >= IDLE_TICKS) {
        timer = undefined;
        fail('idle_timeout');
        return;
      }
      timer?.refresh();
    };
    timer = setTimeout(tick, Math.max(1, Math.ceil(idleTimeout / IDLE_TICKS)));
    timer.unref();
  }
  if (first !== undefined && first.length > 0) upstream.write(first);
  // Either side may have ended while the route was decided ('end' fires even while paused).
  if (client.readableEnded) endUpstream();
  else client.once('end', endUpstream);
  if (upstream.readableEnded) client.end();
  else upstream.once('end', () => client.end());
  // Both sockets arrive paused (peek and connect leave them so): start reading now.
  client.resume();
  upstream.resume();
}
