/**
 * HTTP/2 frame vocabulary for the h2c peek (RFC 9113 §4, §6, §7): frame types, flags, error
 * codes, the typed peek error, the 9-byte frame header reader and the GOAWAY the panel writes
 * before closing a connection it refuses.
 */
import type { ResultCode } from '../base/errors.ts';
import { SwitchboardError } from '../base/errors.ts';

/** HTTP/2 error codes used by the peek (RFC 9113 §7). */
export const H2_ERROR = {
  NO_ERROR: 0x0,
  INTERNAL_ERROR: 0x2,
  REFUSED_STREAM: 0x7,
  PROTOCOL_ERROR: 0x1,
  FLOW_CONTROL_ERROR: 0x3,
  FRAME_SIZE_ERROR: 0x6,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
  /** The listener refuses HTTP/2 (`h2c: refuse`): the client should use HTTP/1.1. */
  HTTP_1_1_REQUIRED: 0xd,
} as const;

/** Frame types (RFC 9113 §6). */
export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

/** Frame flags (RFC 9113 §6.2, §6.5, §6.7). */
export const FLAG = { ACK: 0x1, END_STREAM: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

/** Size of a frame header (RFC 9113 §4.1). */
export const FRAME_HEADER_BYTES = 9;

/** SETTINGS_MAX_FRAME_SIZE before the server's SETTINGS are acknowledged (RFC 9113 §4.2). */
export const INITIAL_MAX_FRAME_SIZE = 16384;

/**
 * A refused h2c connection: `h2Code` is the HTTP/2 error code for the GOAWAY, `result` the
 * access-log result (`bad_request`, or `header_too_large` when a size budget was exceeded).
 */
export class H2PeekError extends SwitchboardError {
  readonly h2Code: number;
  readonly result: ResultCode;
  constructor(h2Code: number, message: string, result: ResultCode = 'bad_request') {
    super('SWB_ERR_H2', message);
    this.h2Code = h2Code;
    this.result = result;
    this.name = 'H2PeekError';
  }
}

/** A decoded frame header; `offset` is where the frame (its header) starts in the buffer. */
export interface FrameHeader {
  readonly offset: number;
  readonly length: number;
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
}

/** Reads the frame header at `offset`, or undefined when fewer than 9 bytes are there. */
export function readFrameHeader(buf: Uint8Array, offset: number): FrameHeader | undefined {
  if (buf.length - offset < FRAME_HEADER_BYTES) return undefined;
  const length = (buf[offset]! << 16) | (buf[offset + 1]! << 8) | buf[offset + 2]!;
  // The reserved bit is ignored on receipt (RFC 9113 §4.1).
  const streamId =
    ((buf[offset + 5]! & 0x7f) << 24) | (buf[offset + 6]! << 16) | (buf[offset + 7]! << 8) | buf[offset + 8]!;
  return { offset, length, type: buf[offset + 3]!, flags: buf[offset + 4]!, streamId };
}

/** Reads a big-endian 32-bit unsigned integer. */
export function readUint32(buf: Uint8Array, offset: number): number {
  return ((buf[offset]! << 24) >>> 0) + ((buf[offset + 1]! << 16) | (buf[offset + 2]! << 8) | buf[offset + 3]!);
}

/** An empty SETTINGS frame: the server connection preface (RFC 9113 §3.4). */
export const SERVER_PREFACE: Buffer = Buffer.from([0, 0, 0, FRAME.SETTINGS, 0, 0, 0, 0, 0]);

/**
 * The bytes to write before closing a refused h2c connection: the server preface (an empty
 * SETTINGS, which must be the server's first frame, RFC 9113 §3.4) followed by a GOAWAY
 * carrying `h2Code` and `lastStreamId` (RFC 9113 §6.8). 26 bytes.
 */
export function goawayFrame(h2Code: number, lastStreamId = 0): Buffer {
  const out = Buffer.alloc(SERVER_PREFACE.length + FRAME_HEADER_BYTES + 8);
  SERVER_PREFACE.copy(out, 0);
  const at = SERVER_PREFACE.length;
  out.writeUIntBE(8, at, 3);
  out[at + 3] = FRAME.GOAWAY;
  out.writeUInt32BE(lastStreamId & 0x7fffffff, at + FRAME_HEADER_BYTES);
  out.writeUInt32BE(h2Code >>> 0, at + FRAME_HEADER_BYTES + 4);
  return out;
}
