/**
 * h2c prior-knowledge peek: from the first bytes of a connection, the routing keys of its
 * first request (RFC 9113 §3.4, §6.2, §6.10; RFC 7541).
 *
 * ```
 * | preface (24) | SETTINGS | (SETTINGS|WINDOW_UPDATE|PING|PRIORITY|unknown)* | HEADERS | CONTINUATION* |
 *                                                                             ^ block ends at END_HEADERS
 * ```
 * 1. Match the 24-byte preface incrementally (`PRI` alone is also an HTTP/1 method).
 * 2. The first frame must be a SETTINGS frame; until the server's SETTINGS are acknowledged every
 *    payload is ≤ 16384 bytes, which holds during the peek since the backend has not spoken.
 * 3. Skip the control frames a client may send before its first request, bounded in number
 *    and bytes; anything else on an idle stream is a PROTOCOL_ERROR (§5.1).
 * 4. Collect the HEADERS fragment (padding and priority stripped) and its CONTINUATION frames,
 *    which must follow on the same stream with nothing in between, bounded in number and in
 *    total block bytes (the CONTINUATION flood, RFC 9113 §10.5.1).
 * 5. Decode the complete block with a fresh HPACK decoder (table 4096, the server's default:
 *    the client's own SETTINGS do not size the table for its requests) and validate it.
 * The peek only reads: the caller forwards the original bytes unchanged. `H2cScanner` resumes
 * where the last read left it (frames already validated are not walked again), and every check
 * runs in byte order, so the answer is the same whatever the split. Its `settingsEnd` says when
 * steps 1–2 are done, so the panel can send its own SETTINGS before the first HEADERS arrives
 * (clients such as grpc-js wait for them). `undefined`
 * means "need more bytes"; a refusal throws `H2PeekError`, whose `h2Code` goes into the GOAWAY
 * written by `goawayFrame` before closing.
 */

import { type H2cFields, validateRequestFields } from './h2-fields.ts';
import {
  FLAG,
  FRAME,
  FRAME_HEADER_BYTES,
  type FrameHeader,
  H2_ERROR,
  H2PeekError,
  INITIAL_MAX_FRAME_SIZE,
  readFrameHeader,
  readUint32,
} from './h2-frames.ts';
import { HpackDecoder } from './hpack.ts';
import { DEFAULT_MAX_HEADER_COUNT } from './http1.ts';

export { goawayFrame, H2_ERROR, H2PeekError, SERVER_PREFACE } from './h2-frames.ts';

/** The client connection preface (RFC 9113 §3.4). */
export const H2_PREFACE: Buffer = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Frames allowed before the first HEADERS (SETTINGS included). */
export const MAX_PRELUDE_FRAMES = 32;
/** CONTINUATION frames allowed after the first HEADERS. */
export const MAX_CONTINUATION_FRAMES = 32;

/**
 * Told of each SETTINGS (not an ACK) and PING (not an ACK) before the first HEADERS, in byte
 * order, as the scanner validates it: the panel answers them before any backend is chosen
 * (RFC 9113 §6.5.3, §6.7). A PING's `payload` is a view of the peek buffer: copy to keep it.
 */
export type H2cControl = (type: 'settings' | 'ping', payload: Buffer) => void;

/** The first request of an h2c connection, as routing sees it. */
export interface H2cHead extends H2cFields {
  readonly streamId: number;
  /** Bytes consumed up to the end of the first header block (END_HEADERS frame included). */
  readonly length: number;
}

/**
 * The preface's request line, `PRI * HTTP/2.0`: no HTTP/1.x request carries version 2.0 (the
 * preface was chosen so that HTTP/1 servers refuse it, RFC 9113 §3.4).
 */
export const H2_PREFACE_LINE_BYTES = 14;

/** true = the whole h2c preface, false = not h2c, undefined = too few bytes to tell yet. */
export function looksLikeH2c(buf: Buffer): boolean | undefined {
  return matchPreface(buf, H2_PREFACE.length);
}

/**
 * true = the bytes start with the preface's request line (h2c; a divergence after it is a bad
 * preface, refused with GOAWAY by the scanner), false = not h2c, undefined = too few bytes.
 */
export function startsLikeH2c(buf: Buffer): boolean | undefined {
  return matchPreface(buf, H2_PREFACE_LINE_BYTES);
}

function matchPreface(buf: Buffer, decides: number): boolean | undefined {
  const n = Math.min(buf.length, decides);
  for (let i = 0; i < n; i++) if (buf[i] !== H2_PREFACE[i]) return false;
  return n === decides ? true : undefined;
}

function protocolError(why: string): H2PeekError {
  return new H2PeekError(H2_ERROR.PROTOCOL_ERROR, `h2c: ${why}`);
}

function frameSizeError(why: string): H2PeekError {
  return new H2PeekError(H2_ERROR.FRAME_SIZE_ERROR, `h2c: ${why}`);
}

function calmError(why: string, result: 'bad_request' | 'header_too_large' = 'bad_request'): H2PeekError {
  return new H2PeekError(H2_ERROR.ENHANCE_YOUR_CALM, `h2c: ${why}`, result);
}

/**
 * Incremental h2c peek for one connection: `feed(buf)` with the same buffer, grown, after each
 * read. Frames already validated are not walked again and a SETTINGS payload is checked once,
 * so a prelude trickled one byte per read costs O(n) overall; only the frame in progress has
 * its 9-byte header re-read. The verdict is the one the whole buffer would get.
 */
export class H2cScanner {
  readonly #max: number;
  /** `limits.maxHeaderCount`: regular fields (pseudo-headers aside) the first request may carry. */
  readonly #maxFields: number;
  /** Preface matched. */
  #preface = false;
  /** Start of the next frame not yet validated. */
  #offset = H2_PREFACE.length;
  /** Prelude frames validated. */
  #frames = 0;
  /** The first HEADERS frame, once its header is read. */
  #headers: FrameHeader | undefined;
  /** [start, end) of each complete header block fragment. */
  readonly #fragments: number[] = [];
  #total = 0;
  #flags = 0;
  #continuations = 0;
  #done: H2cHead | undefined;
  /**
   * Where the client's first SETTINGS frame ends, once the preface and that frame are complete
   * and valid: the server may answer with its own SETTINGS from then on (RFC 9113 §3.4).
   */
  settingsEnd: number | undefined;
  /** Called for each prelude SETTINGS and PING that asks for an answer (`H2cControl`). */
  onControl: H2cControl | undefined;

  constructor(maxHeaderBytes: number, maxHeaderCount = DEFAULT_MAX_HEADER_COUNT) {
    this.#max = maxHeaderBytes;
    this.#maxFields = maxHeaderCount;
  }

  /** The first request's head, `undefined` when more bytes are needed, or a thrown `H2PeekError`. */
  feed(buf: Buffer): H2cHead | undefined {
    if (this.#done !== undefined) return this.#done;
    if (!this.#preface) {
      const preface = looksLikeH2c(buf);
      if (preface === false) {
        const at = buf.findIndex((b, i) => b !== H2_PREFACE[i]);
        throw protocolError(`bad connection preface at byte ${at}`);
      }
      if (preface === undefined) return undefined;
      this.#preface = true;
    }
    if (this.#headers === undefined && !this.#prelude(buf)) return undefined;
    this.#done = this.#request(buf);
    return this.#done;
  }

  /** Walks the frames before the first HEADERS; true once its header is read. */
  #prelude(buf: Buffer): boolean {
    for (;;) {
      const frames = this.#frames;
      const frame = readFrameHeader(buf, this.#offset);
      if (frame === undefined) return false;
      checkFrameSize(frame);
      if (frames === 0 && frame.type !== FRAME.SETTINGS)
        throw protocolError(`first frame is type ${frame.type}, not settings`);
      if (frame.type === FRAME.HEADERS) {
        startRequest(frame);
        this.#headers = frame;
        this.#offset = frame.offset + FRAME_HEADER_BYTES + frame.length;
        this.#flags = frame.flags;
        return true;
      }
      if (frames >= MAX_PRELUDE_FRAMES)
        throw calmError(`more than ${MAX_PRELUDE_FRAMES} frames before the first headers`);
      checkPreludeFrame(frame, frames === 0);
      const end = this.#offset + FRAME_HEADER_BYTES + frame.length;
      if (end - H2_PREFACE.length > this.#max) {
        throw calmError(`frames before the first headers exceed ${this.#max} bytes`, 'header_too_large');
      }
      if (buf.length < end) return false;
      checkPreludePayload(buf, frame);
      if ((frame.flags & FLAG.ACK) === 0 && this.onControl !== undefined) {
        if (frame.type === FRAME.SETTINGS) this.onControl('settings', buf.subarray(end - frame.length, end));
        else if (frame.type === FRAME.PING) this.onControl('ping', buf.subarray(end - frame.length, end));
      }
      this.#offset = end;
      this.#frames = frames + 1;
      if (frames === 0) this.settingsEnd = end;
    }
  }

  /** Collects the header block of the first HEADERS and its CONTINUATIONs, then decodes it. */
  #request(buf: Buffer): H2cHead | undefined {
    const headers = this.#headers!;
    const { streamId } = headers;
    if (this.#fragments.length === 0) {
      if (buf.length < this.#offset) return undefined;
      const [start, end] = headerFragment(buf, headers);
      this.#fragments.push(start, end);
      this.#total = end - start;
    }
    while ((this.#flags & FLAG.END_HEADERS) === 0) {
      const at = this.#offset;
      const frame = readFrameHeader(buf, at);
      if (frame === undefined) return undefined;
      if (frame.type !== FRAME.CONTINUATION || frame.streamId !== streamId) {
        throw protocolError(
          `frame type ${frame.type} on stream ${frame.streamId} at byte ${at} interrupts the header block of stream ${streamId}`,
        );
      }
      checkFrameSize(frame);
      if (this.#continuations >= MAX_CONTINUATION_FRAMES)
        throw calmError(`more than ${MAX_CONTINUATION_FRAMES} continuation frames`);
      const total = this.#total + frame.length;
      if (total > this.#max) throw calmError(`header block exceeds ${this.#max} bytes`, 'header_too_large');
      const end = frame.offset + FRAME_HEADER_BYTES + frame.length;
      if (buf.length < end) return undefined;
      this.#fragments.push(frame.offset + FRAME_HEADER_BYTES, end);
      this.#total = total;
      this.#continuations++;
      this.#offset = end;
      this.#flags = frame.flags;
    }
    const f = this.#fragments;
    const block =
      f.length === 2
        ? buf.subarray(f[0]!, f[1]!)
        : Buffer.concat(
            Array.from({ length: f.length / 2 }, (_, i) => buf.subarray(f[2 * i]!, f[2 * i + 1]!)),
            this.#total,
          );
    try {
      const fields = new HpackDecoder(4096).decode(block, this.#max);
      let regular = 0;
      for (const [name] of fields) if (name.charCodeAt(0) !== 0x3a) regular++;
      if (regular > this.#maxFields) throw calmError(`more than ${this.#maxFields} header fields`, 'header_too_large');
      return { ...validateRequestFields(fields), streamId, length: this.#offset };
    } catch (e) {
      // Chain the stream in front of the decoder's or validator's own where-and-what.
      if (e instanceof H2PeekError) throw new H2PeekError(e.h2Code, `h2c: stream ${streamId}: ${e.message}`, e.result);
      throw e;
    }
  }
}

/**
 * One-shot form: the first request of an h2c connection, `undefined` when more bytes are
 * needed, or a thrown `H2PeekError`. `maxHeaderBytes` bounds the frames before the request,
 * the compressed header block and the decoded header list.
 */
export function peekH2c(buf: Buffer, maxHeaderBytes: number): H2cHead | undefined {
  return new H2cScanner(maxHeaderBytes).feed(buf);
}

/** The first HEADERS must open a client stream. */
function startRequest(headers: FrameHeader): void {
  const { streamId } = headers;
  if (streamId === 0 || streamId % 2 === 0)
    throw protocolError(`headers on ${streamId === 0 ? 'stream 0' : `even stream ${streamId}`}`);
}

function checkFrameSize(frame: FrameHeader): void {
  if (frame.length > INITIAL_MAX_FRAME_SIZE) {
    throw frameSizeError(
      `frame of type ${frame.type} at byte ${frame.offset} has ${frame.length} bytes (max ${INITIAL_MAX_FRAME_SIZE})`,
    );
  }
}

/** Frame-header checks for the frames a client may send before its first request (§6, §5.1). */
function checkPreludeFrame(frame: FrameHeader, first: boolean): void {
  const { type, length, streamId, flags } = frame;
  const at = `at byte ${frame.offset}`;
  switch (type) {
    case FRAME.SETTINGS:
      if (streamId !== 0) throw protocolError(`settings on stream ${streamId} ${at}`);
      if ((flags & FLAG.ACK) !== 0) {
        if (first) throw protocolError(`first settings is an ack ${at}`);
        if (length !== 0) throw frameSizeError(`settings ack with a payload ${at}`);
      } else if (length % 6 !== 0) {
        throw frameSizeError(`settings length ${length} is not a multiple of 6 ${at}`);
      }
      return;
    case FRAME.PING:
      if (streamId !== 0) throw protocolError(`ping on stream ${streamId} ${at}`);
      if (length !== 8) throw frameSizeError(`ping length ${length} ${at}`);
      return;
    case FRAME.WINDOW_UPDATE:
      // A window update on a stream is illegal while the stream is idle (§5.1).
      if (streamId !== 0) throw protocolError(`window_update on idle stream ${streamId} ${at}`);
      if (length !== 4) throw frameSizeError(`window_update length ${length} ${at}`);
      return;
    case FRAME.PRIORITY:
      if (streamId === 0) throw protocolError(`priority on stream 0 ${at}`);
      if (length !== 5) throw frameSizeError(`priority length ${length} ${at}`);
      return;
    case FRAME.DATA:
    case FRAME.RST_STREAM:
    case FRAME.PUSH_PROMISE:
    case FRAME.GOAWAY:
    case FRAME.CONTINUATION:
      throw protocolError(`unexpected frame type ${type} before the first headers ${at}`);
    default:
      return; // unknown extension frames are ignored (§5.5)
  }
}

/** Payload checks: SETTINGS values (§6.5.2), WINDOW_UPDATE increment (§6.9), PRIORITY self-dependency (§5.3.1). */
function checkPreludePayload(buf: Buffer, frame: FrameHeader): void {
  const start = frame.offset + FRAME_HEADER_BYTES;
  const at = `at byte ${frame.offset}`;
  if (frame.type === FRAME.SETTINGS) {
    for (let p = start; p < start + frame.length; p += 6) {
      const id = (buf[p]! << 8) | buf[p + 1]!;
      const value = readUint32(buf, p + 2);
      if (id === 0x2 && value > 1) throw protocolError(`settings enable_push ${value} ${at}`);
      if (id === 0x4 && value > 0x7fffffff) {
        throw new H2PeekError(H2_ERROR.FLOW_CONTROL_ERROR, `h2c: settings initial_window_size ${value} ${at}`);
      }
      if (id === 0x5 && (value < INITIAL_MAX_FRAME_SIZE || value > 0xffffff)) {
        throw protocolError(`settings max_frame_size ${value} ${at}`);
      }
    }
  } else if (frame.type === FRAME.WINDOW_UPDATE) {
    if ((readUint32(buf, start) & 0x7fffffff) === 0) throw protocolError(`window_update of 0 ${at}`);
  } else if (frame.type === FRAME.PRIORITY) {
    if ((readUint32(buf, start) & 0x7fffffff) === frame.streamId)
      throw protocolError(`stream ${frame.streamId} depends on itself ${at}`);
  }
}

/** The field block fragment of a HEADERS frame, without pad length, priority and padding (§6.2). */
function headerFragment(buf: Buffer, frame: FrameHeader): [number, number] {
  let start = frame.offset + FRAME_HEADER_BYTES;
  let end = start + frame.length;
  const at = `headers at byte ${frame.offset}`;
  if ((frame.flags & FLAG.PADDED) !== 0) {
    if (frame.length < 1) throw frameSizeError(`${at}: padded with no pad length`);
    const padding = buf[start]!;
    start += 1;
    if (padding > end - start) throw protocolError(`${at}: padding of ${padding} exceeds the payload`);
    end -= padding;
  }
  if ((frame.flags & FLAG.PRIORITY) !== 0) {
    if (end - start < 5) throw frameSizeError(`${at}: too short for its priority fields`);
    if ((readUint32(buf, start) & 0x7fffffff) === frame.streamId)
      throw protocolError(`${at}: stream depends on itself`);
    start += 5;
  }
  return [start, end];
}
