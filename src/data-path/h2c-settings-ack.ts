/**
 * h2c through a splicing panel: removing the one SETTINGS ACK the client sends for the router's
 * own SETTINGS (DESIGN, the second exception to "bytes are not modified").
 *
 *   client ─► | preface | SETTINGS | frame … | SETTINGS ACK (9 bytes) | frame … ─► backend
 *             └─ skipped by declared lengths ┘ └─ the first one: cut ─┘ └─ plain splice
 *
 * The panel answers the client preface with an empty SETTINGS frame while it peeks (clients such
 * as grpc-js send no HEADERS before the server's SETTINGS, RFC 9113 §3.4), and the client
 * acknowledges it once (§6.5.3). The backend never sent those settings, so it must not see that
 * ACK: an unsolicited ACK is a connection error for nghttp2-based servers, and the backend's own
 * SETTINGS would look acknowledged before the client applied them. The client's first ACK is
 * ours: the router's SETTINGS reach the client before any byte of the backend's.
 *
 * 1. Walk the client's frames from the end of the preface by their declared lengths, across
 *    reads: payloads pass without being looked at; a frame header split across reads (fewer
 *    than 9 bytes) is held back until the next read completes it (or the stream ends: `flush`).
 * 2. The first frame with type SETTINGS, the ACK flag, length 0 and stream 0 is cut out; every
 *    other byte passes, in order. (The peek refused a first SETTINGS that is an ACK.)
 * 3. Then `done` is true and the splice drops the filter: the rest costs nothing per read.
 */
import { FLAG, FRAME, FRAME_HEADER_BYTES } from '../peek/h2-frames.ts';
import { H2_PREFACE } from '../peek/h2c.ts';

/** A SETTINGS frame with ACK, length 0, on stream 0 (the reserved bit ignored, RFC 9113 §4.1). */
function isSettingsAck(buf: Buffer, at: number): boolean {
  return (
    buf[at] === 0 &&
    buf[at + 1] === 0 &&
    buf[at + 2] === 0 &&
    buf[at + 3] === FRAME.SETTINGS &&
    (buf[at + 4]! & FLAG.ACK) !== 0 &&
    (buf[at + 5]! & 0x7f) === 0 &&
    buf[at + 6] === 0 &&
    buf[at + 7] === 0 &&
    buf[at + 8] === 0
  );
}

/** The client → backend byte stream of one h2c connection, minus the first SETTINGS ACK. */
export class SettingsAckFilter {
  /** Bytes still to pass before the next frame header (the preface first). */
  #skip: number = H2_PREFACE.length;
  /** The start of a frame header that a read cut (fewer than 9 bytes). */
  #held: Buffer | undefined;
  #done = false;

  /** true once the ACK was cut: every later chunk passes as it is. */
  get done(): boolean {
    return this.#done;
  }

  /** The bytes of `chunk` to forward now, in order (may be empty; held bytes come first). */
  push(chunk: Buffer): Buffer {
    if (this.#done) return chunk;
    let buf = chunk;
    if (this.#held !== undefined) {
      buf = Buffer.concat([this.#held, chunk]);
      this.#held = undefined;
    }
    let at = 0;
    for (;;) {
      const left = buf.length - at;
      if (this.#skip >= left) {
        this.#skip -= left;
        return buf;
      }
      at += this.#skip;
      this.#skip = 0;
      if (buf.length - at < FRAME_HEADER_BYTES) {
        this.#held = buf.subarray(at);
        return buf.subarray(0, at);
      }
      if (isSettingsAck(buf, at)) {
        this.#done = true;
        const after = at + FRAME_HEADER_BYTES;
        if (at === 0) return buf.subarray(after);
        if (after === buf.length) return buf.subarray(0, at);
        return Buffer.concat([buf.subarray(0, at), buf.subarray(after)]);
      }
      this.#skip = FRAME_HEADER_BYTES + ((buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!);
    }
  }

  /** The bytes held back when the client's stream ends (an incomplete frame header), if any. */
  flush(): Buffer | undefined {
    const held = this.#held;
    this.#held = undefined;
    return held;
  }
}
