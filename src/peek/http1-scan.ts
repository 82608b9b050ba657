/**
 * Finds the end of an HTTP/1 head (request or response) in a growing buffer, incrementally.
 *
 *   buf: [CRLF]? start-line CRLF *( field-line CRLF ) CRLF | body…
 *        ^skip   ^start                                  ^headLength
 *
 * 1. The caller accumulates bytes in one buffer and calls `scan(buf)` again after each read;
 *    the scanner remembers how far it got, so feeding 1 byte at a time costs O(n) in total.
 * 2. Every CR must be followed by LF, and every LF preceded by CR (RFC 9112 §2.2; hazard #6):
 *    a bare CR or bare LF anywhere in the head is rejected as soon as it is seen.
 * 3. Bytes of the start line are checked as they arrive (no CTL, no TAB in a request line), so
 *    binary garbage is refused at once instead of after `maxHeaderBytes`.
 * 4. At most one empty line before the start line is skipped (RFC 9112 §2.2 MAY; hazard #13);
 *    a second one is rejected.
 * 5. The head ends at the first empty line after the start line. If `maxHeaderBytes` bytes are
 *    buffered without reaching it: no start-line end yet → `tooLongLine` (414 for requests),
 *    else `header_too_large` (431).
 *
 * Errors are decided in byte order, so the verdict depends only on the bytes, never on how they
 * were split across reads.
 */

import { peerError, type ResultCode } from '../base/errors.ts';

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HT = 0x09;

/** The start-line bytes #checkStartLineByte refuses (CR and LF are the scan's own), by byte. */
const REQUEST_LINE_REFUSED = new Uint8Array(256);
const STATUS_LINE_REFUSED = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  if (c === CR || c === LF) continue;
  if (c === HT || c < SP || c > 0x7e) REQUEST_LINE_REFUSED[c] = 1;
  if ((c < SP && c !== HT) || c === 0x7f) STATUS_LINE_REFUSED[c] = 1;
}

/** Which start line the scanner checks: a request line is stricter than a status line. */
export type HeadKind = 'request' | 'response';

/** Incremental head-end finder; one per direction of a connection, `reset()` between heads. */
export class HeadScanner {
  readonly #max: number;
  readonly #kind: HeadKind;
  readonly #who: string;
  #pos = 0;
  #lineStart = 0;
  #start = 0;
  #startLineEnd = -1;

  constructor(kind: HeadKind, maxHeaderBytes: number) {
    this.#kind = kind;
    this.#max = maxHeaderBytes;
    this.#who = kind === 'request' ? 'http1' : 'http1 response';
  }

  /** Offset of the start line (1 or 2 when a leading CRLF was skipped). */
  get start(): number {
    return this.#start;
  }

  /** Offset of the CR that ends the start line, or -1 while it is not complete. */
  get startLineEnd(): number {
    return this.#startLineEnd;
  }

  /** Forgets everything; the next `scan` starts a new head at offset 0 of its buffer. */
  reset(): void {
    this.#pos = 0;
    this.#lineStart = 0;
    this.#start = 0;
    this.#startLineEnd = -1;
  }

  /**
   * Scans the new bytes of `buf` (the same buffer, grown); returns the head length including
   * the final CRLFCRLF, or -1 when more bytes are needed. Throws a peer error otherwise.
   */
  scan(buf: Uint8Array): number {
    const limit = Math.min(buf.length, this.#max);
    let i = this.#pos;
    while (i < limit) {
      const c = buf[i]!;
      if (c === CR) {
        if (i + 1 >= limit) break; // LF not here yet (or beyond the limit)
        if (buf[i + 1] !== LF) throw this.#bad(`bare CR at byte ${i}`);
        const done = this.#endLine(i);
        i += 2;
        this.#lineStart = i;
        if (done) {
          this.#pos = i;
          return i;
        }
        continue;
      }
      if (c === LF) throw this.#bad(`bare LF at byte ${i}`);
      if (this.#startLineEnd === -1) {
        // The start line up to its CR or LF: a table says which bytes #checkStartLineByte refuses.
        const refused = this.#kind === 'request' ? REQUEST_LINE_REFUSED : STATUS_LINE_REFUSED;
        if (refused[c] === 1) this.#checkStartLineByte(c, i);
        i++;
        while (i < limit) {
          const d = buf[i]!;
          if (d === CR || d === LF) break;
          if (refused[d] === 1) this.#checkStartLineByte(d, i);
          i++;
        }
        continue;
      }
      // Inside a field line only CR and LF matter here (the field rules check the rest later):
      // one comparison per byte until the next one (issue 18: the scan was ~3 ns a byte).
      i++;
      while (i < limit) {
        const d = buf[i]!;
        if (d <= CR && (d === CR || d === LF)) break;
        i++;
      }
    }
    this.#pos = i;
    if (buf.length < this.#max) return -1;
    if (this.#startLineEnd === -1) {
      const code: ResultCode = this.#kind === 'request' ? 'uri_too_long' : 'header_too_large';
      throw peerError(code, `${this.#who}: start line longer than ${this.#max} bytes`);
    }
    throw peerError('header_too_large', `${this.#who}: head larger than ${this.#max} bytes`);
  }

  /** Handles the line ending with the CR at `cr`; true when it was the head's final empty line. */
  #endLine(cr: number): boolean {
    const empty = cr === this.#lineStart;
    if (this.#startLineEnd !== -1) return empty;
    if (!empty) {
      this.#startLineEnd = cr;
      return false;
    }
    if (cr !== 0) throw this.#bad(`more than one empty line before the start line at byte ${cr}`);
    this.#start = 2;
    return false;
  }

  #checkStartLineByte(c: number, at: number): void {
    if (this.#kind === 'request') {
      if (c === HT) throw this.#bad(`tab in request line at byte ${at}`);
      if (c < SP || c > 0x7e) throw this.#bad(`invalid byte 0x${hex(c)} in request line at byte ${at}`);
    } else if ((c < SP && c !== HT) || c === 0x7f) {
      throw this.#bad(`control byte 0x${hex(c)} in status line at byte ${at}`);
    }
  }

  #bad(what: string): Error {
    return peerError('bad_request', `${this.#who}: ${what}`);
  }
}

/** Two-digit hex of a byte, for messages. */
export function hex(c: number): string {
  return c.toString(16).padStart(2, '0');
}
