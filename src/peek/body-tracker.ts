/**
 * Finds where an HTTP/1 message body ends, incrementally, without copying the bytes.
 *
 *   chunk from socket: [ body bytes of this message | bytes of the next message … ]
 *                        └──── feed() returns n ───┘ └ the caller routes them next ┘
 *
 * 1. Created from a head's `bodyFraming`; the caller feeds each chunk read after the head
 *    (`feed(chunk, offset)`), forwards the returned number of bytes as this message's body, and
 *    once `done` is true treats the rest of the chunk as the start of the next message.
 * 2. `none` is done at once; `length` counts down; `close` and `tunnel` take everything and are
 *    never done (the message ends when the connection does).
 * 3. `chunked` is a byte-at-a-time state machine over the framing only (data is skipped in
 *    bulk), strict where peers disagree (hazard #12, RFC 9112 §7.1): chunk-size is 1*HEXDIG
 *    of at most 16 digits (and at most 2^53 - 1), no whitespace before `;`, extensions
 *    bounded and checked against the chunk-ext grammar (RFC 9112 §7.1.1, `chunk-ext.ts`: token
 *    names, token or quoted-string values, no empty name, unclosed quote, stray byte or trailing
 *    whitespace), every line ends in CRLF (bare CR or LF refused), chunk data must be
 *    followed by CRLF, and the trailer section is bounded line by line and in total, with
 *    field lines checked like header lines and framing fields (Content-Length,
 *    Transfer-Encoding, Host) refused in it (RFC 9110 §6.5.1).
 */

import { peerError } from '../base/errors.ts';
import { EXT_BAD, EXT_CR, EXT_NAME_START, extError, extStep } from './chunk-ext.ts';
import { type BodyFraming, parseFieldLine } from './http1-fields.ts';
import { hex } from './http1-scan.ts';

/** Bounds on the chunked framing; defaults suit any real client. */
export interface BodyTrackerLimits {
  /** Longest chunk-size line (size + extensions), and longest trailer line, in bytes. */
  readonly maxLineBytes?: number;
  /** Largest trailer section in bytes. */
  readonly maxTrailerBytes?: number;
}

const MAX_SIZE_DIGITS = 16;

// Chunked states.
const SIZE = 0; // reading hex digits
const EXT = 1; // after ';', until CR (the chunk-ext machine's state is in #ext)
const SIZE_LF = 2; // CR seen at the end of the size line
const DATA = 3;
const DATA_CR = 4;
const DATA_LF = 5;
const TRAILER = 6; // inside a trailer line (or at the start of one)
const TRAILER_LF = 7;
const DONE = 8;

/** Incremental body-end finder for one message. */
export class BodyTracker {
  #kind: BodyFraming['kind'] = 'none';
  readonly #maxLine: number;
  readonly #maxTrailer: number;
  #remaining = 0;
  #state = SIZE;
  #digits = 0;
  #ext = EXT_NAME_START;
  #lineBytes = 0;
  #trailerBytes = 0;
  #trailerLine = '';
  #trailerCount = 0;
  #offset = 0; // body bytes consumed before the current chunk, for messages
  #base = 0; // body offset of chunk index 0 during a feed

  constructor(framing: BodyFraming, limits: BodyTrackerLimits = {}) {
    this.#maxLine = limits.maxLineBytes ?? 4096;
    this.#maxTrailer = limits.maxTrailerBytes ?? 16384;
    this.reset(framing);
  }

  /**
   * Starts over for the next message, framed by `framing` (the limits stay), as a new tracker
   * would: one tracker serves every message of a connection, nothing allocated per message.
   */
  reset(framing: BodyFraming): this {
    this.#kind = framing.kind;
    this.#remaining = framing.kind === 'length' ? framing.length : 0;
    this.#state = framing.kind === 'none' || (framing.kind === 'length' && framing.length === 0) ? DONE : SIZE;
    this.#digits = 0;
    this.#ext = EXT_NAME_START;
    this.#lineBytes = 0;
    this.#trailerBytes = 0;
    this.#trailerLine = '';
    this.#trailerCount = 0;
    this.#offset = 0;
    this.#base = 0;
    return this;
  }

  /** True once the message body has ended (never for `close` / `tunnel`). */
  get done(): boolean {
    return this.#state === DONE;
  }

  /** Consumes body bytes of `chunk` from `offset`; returns how many belong to this message. */
  feed(chunk: Uint8Array, offset = 0): number {
    const available = chunk.length - offset;
    if (this.#state === DONE || available <= 0) return 0;
    let n: number;
    if (this.#kind === 'close' || this.#kind === 'tunnel') {
      n = available;
    } else if (this.#kind === 'length') {
      n = Math.min(available, this.#remaining);
      this.#remaining -= n;
      if (this.#remaining === 0) this.#state = DONE;
    } else {
      this.#base = this.#offset - offset;
      n = this.#chunked(chunk, offset) - offset;
    }
    this.#offset += n;
    return n;
  }

  /** Runs the chunked state machine from `i`; returns the index just past the consumed bytes. */
  #chunked(chunk: Uint8Array, i: number): number {
    const end = chunk.length;
    while (i < end && this.#state !== DONE) {
      if (this.#state === DATA) {
        const take = Math.min(end - i, this.#remaining);
        this.#remaining -= take;
        i += take;
        if (this.#remaining === 0) this.#state = DATA_CR;
        continue;
      }
      this.#byte(chunk[i]!, i);
      i++;
    }
    return i;
  }

  /** One framing byte at absolute chunk index `i`. */
  #byte(c: number, i: number): void {
    const at = this.#base + i;
    switch (this.#state) {
      case SIZE:
        this.#sizeByte(c, at);
        return;
      case EXT: {
        this.#countLine(at);
        const next = extStep(this.#ext, c);
        if (next === EXT_CR) this.#state = SIZE_LF;
        else if (next === EXT_BAD) throw bad(extError(this.#ext, c), at);
        else this.#ext = next;
        return;
      }
      case SIZE_LF:
        if (c !== 0x0a) throw bad('bare CR after chunk size', at);
        this.#lineBytes = 0;
        this.#state = this.#remaining === 0 ? TRAILER : DATA;
        return;
      case DATA_CR:
        if (c !== 0x0d) throw bad('chunk data not followed by CRLF', at);
        this.#state = DATA_LF;
        return;
      case DATA_LF:
        if (c !== 0x0a) throw bad('chunk data not followed by CRLF', at);
        this.#state = SIZE;
        this.#digits = 0;
        return;
      case TRAILER:
        this.#trailerByte(c, at);
        return;
      case TRAILER_LF:
        if (c !== 0x0a) throw bad('bare CR in trailer section', at);
        this.#endTrailerLine(at);
        return;
    }
  }

  #sizeByte(c: number, at: number): void {
    const v = hexDigit(c);
    if (v >= 0) {
      if (++this.#digits > MAX_SIZE_DIGITS) throw bad(`chunk size longer than ${MAX_SIZE_DIGITS} hex digits`, at);
      this.#remaining = this.#remaining * 16 + v;
      if (this.#remaining > Number.MAX_SAFE_INTEGER) throw bad('chunk size too large', at);
      this.#countLine(at);
      return;
    }
    if (this.#digits === 0) throw bad(`invalid byte 0x${hex(c)} in chunk size`, at);
    if (c === 0x3b) {
      this.#state = EXT;
      this.#ext = EXT_NAME_START;
      this.#countLine(at);
    } else if (c === 0x0d) {
      this.#state = SIZE_LF;
    } else {
      throw bad(`invalid byte 0x${hex(c)} after chunk size`, at);
    }
  }

  #trailerByte(c: number, at: number): void {
    if (c === 0x0d) {
      this.#state = TRAILER_LF;
      return;
    }
    if (c === 0x0a) throw bad('bare LF in trailer section', at);
    if (++this.#trailerBytes > this.#maxTrailer) throw bad(`trailer section larger than ${this.#maxTrailer} bytes`, at);
    this.#countLine(at);
    this.#trailerLine += String.fromCharCode(c);
  }

  #endTrailerLine(at: number): void {
    const line = this.#trailerLine;
    this.#trailerLine = '';
    this.#lineBytes = 0;
    if (line === '') {
      this.#state = DONE;
      return;
    }
    this.#state = TRAILER;
    const [name] = parseFieldLine(line, ++this.#trailerCount, at, 'http1 chunked trailer');
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'transfer-encoding' || lower === 'host') {
      throw bad(`${lower} in trailer section`, at);
    }
  }

  #countLine(at: number): void {
    if (++this.#lineBytes > this.#maxLine) throw bad(`chunk line longer than ${this.#maxLine} bytes`, at);
  }
}

const spareTrackers: BodyTracker[] = [];
/** Spares kept at most: enough for the bodies in flight at once on a busy router. */
const MAX_SPARE_TRACKERS = 64;

/**
 * A tracker (default limits) for one message framed by `framing`: a spare one reset, else new.
 * A connection takes one per message body and gives it back when the body is done, so between
 * messages it holds none (issue 18: what an idle connection keeps).
 */
export function takeTracker(framing: BodyFraming): BodyTracker {
  return spareTrackers.pop()?.reset(framing) ?? new BodyTracker(framing);
}

/**
 * Gives back a tracker taken with `takeTracker`, once, when its message is done and the caller
 * has dropped every reference to it (a tracker in two hands would frame two messages at once).
 */
export function releaseTracker(tracker: BodyTracker): void {
  if (spareTrackers.length < MAX_SPARE_TRACKERS) spareTrackers.push(tracker);
}

/** Value of a hex digit char code, or -1. */
function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

function bad(what: string, at: number): Error {
  return peerError('bad_request', `http1 chunked: ${what} at body byte ${at}`);
}
