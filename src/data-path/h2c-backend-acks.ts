/**
 * h2c through a splicing panel (`listeners[].h2c: allow`): removing the backend's ACKs of what
 * the router already answered before routing (issue 40 item 4).
 *
 * While it peeks, the net panel answers the client itself: its own empty SETTINGS, a SETTINGS
 * ACK for every client SETTINGS before the first HEADERS, and a PING ACK (same payload) for every
 * PING there (RFC 9113 §6.5.3, §6.7), so a client that waits for those before its first request
 * is served. The backend later receives the same frames and answers them too; the client must
 * not get the answers twice (a second SETTINGS ACK is an unsolicited one: nghttp2 takes it for a
 * connection error). So on the backend → client bytes:
 *
 *   backend ─► | frame … | SETTINGS ACK | frame … | PING ACK (payload p1) | … ─► client
 *                           └─ first n: cut ─┘        └─ ACKs of p1…pm, in order: cut ─┘
 *
 * 1. Walk the backend's frames from its first byte by their declared lengths, across reads;
 *    payloads of other frames pass without being looked at. A frame header split across reads,
 *    or a PING ACK whose payload is split, is held back (copied: the upstream reads into reused
 *    buffers, src/data-path/own-reads.ts) until the next read completes it, or the stream ends (`flush`).
 * 2. A SETTINGS frame with ACK (length 0, stream 0) is cut while `n` are still owed; a PING
 *    with ACK (length 8, stream 0) is cut when its payload is the next one owed. Every other
 *    byte passes, in order.
 * 3. Once nothing is owed, `done` is true and the splice drops the filter: the rest costs
 *    nothing per read.
 */
import { FLAG, FRAME, FRAME_HEADER_BYTES } from '../peek/h2-frames.ts';

const PING_BYTES = FRAME_HEADER_BYTES + 8;

/** The backend → client byte stream of one h2c connection, minus the ACKs the router already sent. */
export class BackendAckFilter {
  /** SETTINGS ACKs still to cut. */
  #settings: number;
  /** PING payloads whose ACK is still to cut, in order. */
  readonly #pings: Buffer[];
  /** Bytes still to pass before the next frame header. */
  #skip = 0;
  /** A frame header, or a PING ACK, that a read cut (a copy). */
  #held: Buffer | undefined;

  /** `settings` ACKs and the ACKs of `pings` (payloads, in order) are the router's already. */
  constructor(settings: number, pings: readonly Buffer[]) {
    this.#settings = settings;
    this.#pings = [...pings];
  }

  /** true once every owed ACK was cut: every later chunk passes as it is. */
  get done(): boolean {
    return this.#settings === 0 && this.#pings.length === 0;
  }

  /** The bytes of `chunk` to forward now, in order (may be empty; held bytes come first). */
  push(chunk: Buffer): Buffer {
    if (this.done) return chunk;
    let buf = chunk;
    if (this.#held !== undefined) {
      buf = Buffer.concat([this.#held, chunk]);
      this.#held = undefined;
    }
    const keep: Buffer[] = [];
    let from = 0;
    let at = 0;
    while (!this.done) {
      const left = buf.length - at;
      if (this.#skip >= left) {
        this.#skip -= left;
        at = buf.length;
        break;
      }
      at += this.#skip;
      this.#skip = 0;
      const cut = this.#owed(buf, at);
      if (cut === undefined) {
        // Too few bytes to tell: what is before passes, the rest waits for the next read.
        this.#held = Buffer.from(buf.subarray(at));
        return joined(keep, buf.subarray(from, at));
      }
      if (cut > 0) {
        if (at > from) keep.push(buf.subarray(from, at));
        at += cut;
        from = at;
      } else {
        this.#skip = FRAME_HEADER_BYTES + ((buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!);
      }
    }
    if (from === 0 && keep.length === 0) return buf;
    return joined(keep, buf.subarray(from));
  }

  /**
   * At a frame header: the bytes to cut (the whole frame) when it is an owed ACK, 0 when it
   * passes, undefined when the bytes so far cannot tell.
   */
  #owed(buf: Buffer, at: number): number | undefined {
    if (buf.length - at < FRAME_HEADER_BYTES) return undefined;
    const type = buf[at + 3];
    const ack = (buf[at + 4]! & FLAG.ACK) !== 0;
    const onZero = (buf[at + 5]! & 0x7f) === 0 && buf[at + 6] === 0 && buf[at + 7] === 0 && buf[at + 8] === 0;
    const length = (buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!;
    if (!ack || !onZero) return 0;
    if (type === FRAME.SETTINGS && length === 0 && this.#settings > 0) {
      this.#settings--;
      return FRAME_HEADER_BYTES;
    }
    if (type === FRAME.PING && length === 8 && this.#pings.length > 0) {
      if (buf.length - at < PING_BYTES) return undefined;
      if (!buf.subarray(at + FRAME_HEADER_BYTES, at + PING_BYTES).equals(this.#pings[0]!)) return 0;
      this.#pings.shift();
      return PING_BYTES;
    }
    return 0;
  }

  /** The bytes held back when the backend's stream ends, if any. */
  flush(): Buffer | undefined {
    const held = this.#held;
    this.#held = undefined;
    return held;
  }
}

function joined(keep: Buffer[], last: Buffer): Buffer {
  if (keep.length === 0) return last;
  if (last.length > 0) keep.push(last);
  return keep.length === 1 ? keep[0]! : Buffer.concat(keep);
}
