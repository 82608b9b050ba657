/**
 * Splicing two sockets both ways with backpressure, half-close and an idle timeout.
 *
 *   client ──pipe──► upstream      pipe() pauses the source when the destination's buffer is
 *   client ◄──pipe── upstream      full, and ends the destination when the source ends
 *                                  (half-close: allowHalfOpen is set on both sockets)
 *
 * An error or close on one side destroys the other (STYLE §13); `onDone` runs once, after both
 * sockets have closed, with why the splice ended.
 */
import type { Socket } from 'node:net';

export type SpliceEnd = 'ok' | 'idle_timeout' | 'client_error' | 'upstream_error';

/** Splices `client` and `upstream`; `head` (the peeked bytes) is written upstream first. */
export function splice(
  client: Socket,
  upstream: Socket,
  head: Buffer | undefined,
  idleTimeout: number,
  onDone: (end: SpliceEnd) => void,
): void {
  let end: SpliceEnd = 'ok';
  let open = 2;
  const closed = () => {
    if (--open === 0) onDone(end);
  };
  const fail = (why: SpliceEnd) => () => {
    if (end === 'ok') end = why;
    client.destroy();
    upstream.destroy();
  };
  client.on('error', fail('client_error'));
  upstream.on('error', fail('upstream_error'));
  client.once('close', closed);
  upstream.once('close', closed);
  // A close without an error on one side ends the other once its writes have flushed.
  client.once('close', () => upstream.destroySoon());
  upstream.once('close', () => client.destroySoon());
  if (idleTimeout > 0) {
    const onIdle = fail('idle_timeout');
    client.setTimeout(idleTimeout, onIdle);
    upstream.setTimeout(idleTimeout, onIdle);
  }
  if (head !== undefined && head.length > 0) upstream.write(head);
  client.pipe(upstream);
  upstream.pipe(client);
}
