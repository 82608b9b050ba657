/**
 * TLS ClientHello peek: SNI, ALPN and versions from the first flight, without terminating TLS.
 *
 * 1. The caller accumulates bytes and calls `ClientHelloScanner.feed` with the whole buffer
 *    each time; `undefined` means "need more", a `SwitchboardError('SWB_ERR_TLS_HELLO')` means
 *    "not a valid hello, close". The scanner resumes at the first record not yet complete, so
 *    records already seen are never walked again (trickled bytes cost O(n) overall). Every
 *    check runs in byte order using declared lengths only (never `buf.length`), so any split
 *    of the same input yields the same final answer. `peekClientHello` is the one-shot form.
 * 2. Records (RFC 8446 §5.1): type 22 only, version major 3, length 1..2^14. Their fragments
 *    are concatenated into one handshake message whose 24-bit length says when to stop; a
 *    ClientHello may span several records (nginx reassembles, HAProxy does not).
 * 3. The handshake header is checked as soon as its bytes arrive (type 1, size under the cap),
 *    so garbage is refused early instead of waiting for a peek timeout.
 * 4. The body is parsed by `tls-extensions.ts` with every length checked against its parent.
 *
 *    record 1                          record 2
 *    ┌────┬─────┬─────┬──────────────┐ ┌────┬─────┬─────┬───────────┐
 *    │0x16│03 0x│ len │ 01 LLLLLL ...│ │0x16│03 0x│ len │ ... rest  │ [CCS / early data ignored]
 *    └────┴─────┴─────┴──────────────┘ └────┴─────┴─────┴───────────┘
 *                     └──────── handshake message (4 + L bytes) ────┘
 *    `length` = bytes up to the end of the record that completes the message.
 */
import { SwitchboardError } from '../base/errors.ts';
import { type HelloFields, parseHelloBody } from './tls-extensions.ts';

/** Default cap on the records holding a ClientHello (nginx preread, caddy-l4 use 16 KiB). */
export const DEFAULT_MAX_HELLO_BYTES = 16_384;

const RECORD_HANDSHAKE = 0x16;
const HANDSHAKE_CLIENT_HELLO = 1;
const MAX_RECORD_PAYLOAD = 16_384;

/** What routing learns from a ClientHello; `length` is the bytes of records it occupied. */
export interface ClientHello extends HelloFields {
  length: number;
}

/** True when a connection's first byte opens a TLS handshake record. */
export function looksLikeTls(firstByte: number): boolean {
  return firstByte === RECORD_HANDSHAKE;
}

function fail(msg: string): never {
  throw new SwitchboardError('SWB_ERR_TLS_HELLO', `tls: ${msg}`);
}

/**
 * Incremental ClientHello reader for one connection: `feed(buf)` with the same buffer, grown,
 * after each read. Records already walked are not walked again (a hello trickled one byte per
 * read, or split into many tiny records, costs O(n) overall); only the record in progress has
 * its 5-byte header re-read. The verdict is the one the whole buffer would get.
 */
export class ClientHelloScanner {
  readonly #max: number;
  /** Start of the first record not yet complete. */
  #off = 0;
  /** Handshake bytes in complete records. */
  #hsSeen = 0;
  /** 4 + declared handshake length, once the header is known; -1 before. */
  #hsTotal = -1;
  #hsLen = 0;
  /** Handshake header bytes (0..4) read so far. */
  #h = 0;
  /** [start, end) of each complete record's fragment. */
  readonly #fragments: number[] = [];
  #done: ClientHello | undefined;

  constructor(maxBytes: number = DEFAULT_MAX_HELLO_BYTES) {
    this.#max = maxBytes;
  }

  /** `undefined` while more bytes are needed, the hello once complete, or a thrown SWB_ERR_TLS_HELLO. */
  feed(buf: Buffer): ClientHello | undefined {
    if (this.#done !== undefined) return this.#done;
    const found = this.#walk(buf);
    if (found === undefined) return undefined;
    const fields = parseHelloBody(found.body);
    this.#done = {
      sni: fields.sni,
      alpn: fields.alpn,
      length: found.length,
      legacyVersion: fields.legacyVersion,
      supportedVersions: fields.supportedVersions,
    };
    return this.#done;
  }

  /** Walks the records from the first incomplete one; the handshake body once it is whole. */
  #walk(buf: Buffer): Assembled | undefined {
    const n = buf.length;
    const maxBytes = this.#max;
    for (;;) {
      const off = this.#off;
      if (off >= n) return undefined;
      checkRecordType(buf[off]!, off);
      if (off + 1 >= n) return undefined;
      if (buf[off + 1] !== 3) fail(`record version major ${buf[off + 1]} at byte ${off + 1} is not 3`);
      if (off + 4 >= n) return undefined;
      const recLen = buf.readUInt16BE(off + 3);
      if (recLen === 0) fail(`zero-length handshake record at byte ${off}`);
      if (recLen > MAX_RECORD_PAYLOAD) fail(`record length ${recLen} at byte ${off} exceeds 2^14`);
      const start = off + 5;
      const end = start + recLen;
      if (end > maxBytes) fail(`clienthello records exceed ${maxBytes} bytes (record at byte ${off} ends at ${end})`);
      const hsSeen = this.#hsSeen;
      // The 4-byte handshake header may itself be split across records.
      for (; this.#h < 4 && this.#h < hsSeen + recLen; this.#h++) {
        const h = this.#h;
        const p = start + h - hsSeen;
        if (p >= n) return undefined;
        const byte = buf[p]!;
        if (h === 0 && byte !== HANDSHAKE_CLIENT_HELLO) fail(`handshake type ${byte} at byte ${p} is not clienthello`);
        if (h > 0) this.#hsLen = (this.#hsLen << 8) | byte;
        if (h === 3) {
          this.#hsTotal = 4 + this.#hsLen;
          if (this.#hsTotal + 5 > maxBytes) {
            fail(`clienthello of ${this.#hsTotal} bytes exceeds ${maxBytes} bytes at byte ${p}`);
          }
        }
      }
      const hsTotal = this.#hsTotal;
      if (hsTotal >= 0 && hsSeen + recLen > hsTotal) {
        fail(`${hsSeen + recLen - hsTotal} bytes after the clienthello in record at byte ${off}`);
      }
      if (end > n) return undefined;
      this.#fragments.push(start, end);
      this.#hsSeen = hsSeen + recLen;
      this.#off = end;
      if (this.#hsSeen === hsTotal) {
        const f = this.#fragments;
        const message =
          f.length === 2
            ? buf.subarray(f[0]!, f[1]!)
            : Buffer.concat(Array.from({ length: f.length / 2 }, (_, i) => buf.subarray(f[2 * i]!, f[2 * i + 1]!)));
        return { body: message.subarray(4), length: end };
      }
    }
  }
}

/**
 * One-shot form: the ClientHello at the start of `buf`, `undefined` while more bytes are
 * needed, or a `SWB_ERR_TLS_HELLO` error when the bytes cannot be one.
 */
export function peekClientHello(buf: Buffer, maxBytes: number = DEFAULT_MAX_HELLO_BYTES): ClientHello | undefined {
  return new ClientHelloScanner(maxBytes).feed(buf);
}

function checkRecordType(type: number, off: number): void {
  if (type === RECORD_HANDSHAKE) return;
  if (off === 0 && type & 0x80) fail('sslv2-compatible hello (first byte has the high bit set) is not supported');
  if (off === 0) fail(`first byte 0x${type.toString(16).padStart(2, '0')} is not a handshake record`);
  fail(`record type ${type} at byte ${off} before the clienthello is complete`);
}

interface Assembled {
  body: Buffer;
  length: number;
}
