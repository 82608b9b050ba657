/**
 * `Upgrade: h2c` on an `h2c: route` listener (RFC 7540 §3.2): the router switches the
 * connection itself and hands it to the stream router, which node's http2 server runs.
 *
 * 1. The peek accepted the head (src/peek/h2c-upgrade.ts checked it); nothing has reached a
 *    backend. The router writes `101 Switching Protocols`.
 * 2. It reads the client's preface (24 bytes) and its first frame, which must be SETTINGS
 *    (RFC 9113 §3.4), within what is left of `peekTimeout`. Anything else: GOAWAY
 *    PROTOCOL_ERROR (FRAME_SIZE_ERROR for an oversized SETTINGS), one access line.
 * 3. Node's server does not implement the upgrade, so it is given what a prior-knowledge
 *    client would have sent: the preface, that SETTINGS, the request as HEADERS on stream 1
 *    (END_STREAM), then the client's later bytes unchanged (its streams 3, 5, ...). The
 *    response goes out on stream 1, where the client waits for it.
 */
import type { Socket } from 'node:net';
import type { Connection } from '../../src/listener/connection.ts';
import { FLAG, FRAME, FRAME_HEADER_BYTES, H2_ERROR, INITIAL_MAX_FRAME_SIZE } from '../../src/peek/h2-frames.ts';
import { H2_PREFACE } from '../../src/peek/h2c.ts';
import { SWITCHING_TO_H2C, upgradeHeadersFrames } from '../../src/peek/h2c-upgrade.ts';
import type { Http1Head } from '../../src/peek/http1.ts';

/** How the switch ended when it did not reach the stream router. */
export type UpgradeFailed = (
  result: 'bad_request' | 'client_closed' | 'peek_timeout',
  reason: string,
  h2Code: number,
) => void;

/**
 * The bytes node's server is given once `buf` (everything the client sent after its request
 * head) holds the preface and a whole first SETTINGS frame; undefined = need more bytes; a
 * string = why the client is refused, with its GOAWAY code.
 */
export function stitch(head: Http1Head, buf: Buffer): Buffer | undefined | { reason: string; h2Code: number } {
  const preface = H2_PREFACE.length;
  const n = Math.min(buf.length, preface);
  for (let i = 0; i < n; i++) {
    if (buf[i] !== H2_PREFACE[i]) {
      return { reason: `h2c upgrade: bad connection preface at byte ${i}`, h2Code: H2_ERROR.PROTOCOL_ERROR };
    }
  }
  if (buf.length < preface + FRAME_HEADER_BYTES) return undefined;
  const length = buf.readUIntBE(preface, 3);
  const type = buf[preface + 3]!;
  const flags = buf[preface + 4]!;
  const stream = buf.readUInt32BE(preface + 5) & 0x7fffffff;
  if (type !== FRAME.SETTINGS || (flags & FLAG.ACK) !== 0 || stream !== 0 || length % 6 !== 0) {
    return {
      reason: 'h2c upgrade: the first frame after the preface is not SETTINGS',
      h2Code: H2_ERROR.PROTOCOL_ERROR,
    };
  }
  if (length > INITIAL_MAX_FRAME_SIZE) {
    return { reason: `h2c upgrade: a SETTINGS frame of ${length} bytes`, h2Code: H2_ERROR.FRAME_SIZE_ERROR };
  }
  const settingsEnd = preface + FRAME_HEADER_BYTES + length;
  if (buf.length < settingsEnd) return undefined;
  return Buffer.concat([buf.subarray(0, settingsEnd), upgradeHeadersFrames(head), buf.subarray(settingsEnd)]);
}

/**
 * Switches `c` (step 1-3): `rest` is what the peek read past the request head. `handOver`
 * takes the connection with every byte put back; `failed` answers and logs otherwise.
 */
export function upgradeToH2c(
  c: Connection,
  head: Http1Head,
  rest: Buffer,
  handOver: (c: Connection) => void,
  failed: UpgradeFailed,
): void {
  const socket: Socket = c.socket;
  let buf = rest;
  let settled = false;
  const finish = () => {
    settled = true;
    clearTimeout(timer);
    socket.pause();
    socket.removeListener('data', onData);
    socket.removeListener('end', onEnd);
    socket.removeListener('close', onEnd);
  };
  const decide = () => {
    const out = stitch(head, buf);
    if (out === undefined) return;
    finish();
    if ('reason' in out) failed('bad_request', out.reason, out.h2Code);
    else {
      socket.unshift(out);
      handOver(c);
    }
  };
  const onData = (chunk: Buffer) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    decide();
  };
  const onEnd = () => {
    if (settled) return;
    finish();
    failed('client_closed', 'h2c upgrade: client closed before its preface', H2_ERROR.NO_ERROR);
  };
  const timer = setTimeout(() => {
    if (settled) return;
    finish();
    failed('peek_timeout', 'h2c upgrade: no preface and SETTINGS within peekTimeout', H2_ERROR.NO_ERROR);
  }, c.remaining());
  socket.write(SWITCHING_TO_H2C);
  decide();
  if (settled) return;
  socket.on('data', onData);
  socket.on('end', onEnd);
  socket.on('close', onEnd);
  socket.resume();
}
