/**
 * Peek, decide, replay (STYLE §9): read the first bytes of a connection into a bounded buffer
 * under one deadline (what is left of `peekTimeout` after the listener pipeline read any PROXY
 * header and ran any TLS handshake), until the sniffer can say where the traffic goes.
 *
 *   socket ──data──► buffer ──► Sniffer ──► TLS hello | h2c HEADERS | HTTP/1 head
 *                      ▲           │
 *                      └─ need more┘
 *
 * The buffer handed on holds every byte read so far: the head and whatever followed it. The
 * socket is paused when the peek settles, so nothing more is read until the caller decides.
 * Each read is copied once into a store that doubles (grow-buffer.ts) and each sniffer resumes
 * where it stopped, so a head trickled one byte per read costs O(n), like a bare reader.
 */
import type { Socket } from 'node:net';
import { arm, Deadline, disarm } from '../base/deadline.ts';
import { isPeerError, isSwitchboardError, type ResultCode, resultErrorCode, SwitchboardError } from '../base/errors.ts';
import type { ProxyHeader } from '../proxy-protocol/index.ts';
import { GrowBuffer, type PeekWork } from './grow-buffer.ts';
import { H2PeekError } from './h2-frames.ts';
import type { H2cControl } from './h2c.ts';
import type { PathNormalization } from './path.ts';
import { type H2cMode, type Sniffed, type SniffedKind, Sniffer, type TlsMode } from './sniff.ts';

export type { PeekWork } from './grow-buffer.ts';

/** What the peek found: the sniffed head, the bytes to replay, and the PROXY header if any. */
export type Peeked = Sniffed & { readonly buffer: Buffer; readonly proxy: ProxyHeader | undefined };

/** The peek did not produce a routable head: answer with `result` (or just close); its code says which. */
export class PeekFailure extends SwitchboardError {
  readonly result: ResultCode | 'client_closed';
  /** Which protocol the bytes looked like, to pick how to answer. */
  readonly protocol: SniffedKind | 'proxy' | 'unknown';
  /** HTTP/2 error code for a GOAWAY (h2c only). */
  readonly h2Code: number | undefined;
  constructor(result: PeekFailure['result'], protocol: PeekFailure['protocol'], message: string, h2Code?: number) {
    super(result === 'client_closed' ? 'SWB_ERR_CLIENT_CLOSED' : resultErrorCode(result), message);
    this.name = 'PeekFailure';
    this.result = result;
    this.protocol = protocol;
    this.h2Code = h2Code;
  }
}

export interface PeekOptions {
  readonly peekTimeout: number;
  readonly maxHeaderBytes: number;
  /** `limits.maxHeaderCount`: an HTTP/1 head with more field lines fails with 431 (default 100). */
  readonly maxHeaderCount?: number | undefined;
  readonly tls: TlsMode;
  /** `refuse`: an h2c preface fails the peek with a GOAWAY code (listeners[].h2c). */
  readonly h2c: H2cMode;
  /** The PROXY header the listener pipeline already read (src/listener/proxy-in.ts), carried on. */
  readonly proxy: ProxyHeader | undefined;
  /** The listener's `pathNormalization` (default: merge slashes, decode `%2F`). */
  readonly paths?: PathNormalization | undefined;
  /** Counts the buffer's allocations and copies (tests check that the work is linear). */
  readonly work?: PeekWork | undefined;
  /**
   * Called once, during the peek, when an h2c client's preface and first SETTINGS frame are
   * complete and valid: the moment the server may send its own SETTINGS (RFC 9113 §3.4). The
   * peek itself writes nothing.
   */
  readonly onH2cSettings?: (() => void) | undefined;
  /**
   * h2c: called during the peek for each SETTINGS and PING frame before the first HEADERS that
   * asks for an answer, in byte order (the first is the client's first SETTINGS): the panel
   * answers them before any backend is chosen. The peek itself writes nothing.
   */
  readonly onH2cControl?: H2cControl | undefined;
}

/** Reads from `socket` until the sniffer decides, the deadline passes, or the client goes away. */
export function peekSocket(socket: Socket, options: PeekOptions): Promise<Peeked> {
  return new Promise((resolve, reject) =>
    peekThen(socket, options, (err, peeked) => (err === undefined ? resolve(peeked!) : reject(err))),
  );
}

/** How a peek ends: a PeekFailure, or what was peeked. */
export type PeekDone = (err: PeekFailure | undefined, peeked: Peeked | undefined) => void;

/**
 * One peek's state. Its socket listeners and its deadline's callback are shared by every peek (one
 * function per event, finding the peek in the socket's `kPeek` slot): no closure per connection.
 */
class Peek {
  declare readonly socket: Socket;
  declare readonly options: PeekOptions;
  declare readonly done: PeekDone;
  declare readonly sniffer: Sniffer;
  declare readonly buffer: GrowBuffer;
  /** `peekTimeout` (a shared timer: src/base/deadline.ts). */
  declare readonly deadline: Deadline<Peek>;
  declare settingsSeen: boolean;

  constructor(socket: Socket, options: PeekOptions, done: PeekDone) {
    this.socket = socket;
    this.options = options;
    this.done = done;
    this.sniffer = new Sniffer(options.maxHeaderBytes, options.tls, options.h2c, options.paths, options.maxHeaderCount);
    this.sniffer.h2cControl = options.onH2cControl;
    this.buffer = new GrowBuffer(options.maxHeaderBytes, options.work);
    this.deadline = new Deadline<Peek>(peekTimedOut, this);
    arm(this.deadline, options.peekTimeout);
    this.settingsSeen = false;
  }

  settle(): void {
    disarm(this.deadline);
    const socket = this.socket;
    (socket as PeekSocket)[kPeek] = undefined;
    socket.removeListener('data', peekData);
    socket.removeListener('end', peekEnd);
    socket.removeListener('error', peekError);
    socket.removeListener('close', peekClose);
    socket.pause();
  }

  fail(result: PeekFailure['result'], message: string, h2Code?: number): void {
    this.settle();
    this.done(new PeekFailure(result, this.sniffer.kind ?? 'unknown', message, h2Code), undefined);
  }

  data(chunk: Buffer): void {
    const all = this.buffer.append(chunk);
    if (all.length === 0) return;
    let sniffed: Sniffed | undefined;
    try {
      sniffed = this.sniffer.decide(all);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      this.fail(isPeerError(e) ? e.result : 'bad_request', e.message, e instanceof H2PeekError ? e.h2Code : undefined);
      return;
    }
    if (!this.settingsSeen && this.sniffer.h2cSettingsEnd !== undefined) {
      this.settingsSeen = true;
      this.options.onH2cSettings?.();
    }
    if (sniffed === undefined) return;
    this.settle();
    // Outside the try: what the caller does next (route, connect) is not a peek failure.
    this.done(undefined, { ...sniffed, buffer: all, proxy: this.options.proxy });
  }
}

/**
 * The socket's peek in progress, in a symbol slot on the socket rather than a WeakMap keyed by
 * it (issue 18: a WeakMap entry per connection is a hash insert and, for a young socket, an
 * ephemeron the scavenger must revisit). Cleared to undefined, never deleted (no shape change).
 */
const kPeek = Symbol('switchboard.peek');
type PeekSocket = Socket & { [kPeek]?: Peek | undefined };

function peekData(this: PeekSocket, chunk: Buffer): void {
  this[kPeek]?.data(chunk);
}

function peekEnd(this: PeekSocket): void {
  this[kPeek]?.fail('client_closed', 'client closed before the head was complete');
}

/** A socket destroyed locally (drain, limits) closes without 'end' or 'error'. */
function peekClose(this: PeekSocket): void {
  this[kPeek]?.fail('client_closed', 'connection closed during the peek');
}

function peekError(this: PeekSocket, err: Error): void {
  this[kPeek]?.fail('client_closed', `client error: ${err.message}`);
}

function peekTimedOut(p: Peek): void {
  const protocol = p.sniffer.kind ?? (p.buffer.length === 0 ? 'unknown' : 'http1');
  p.settle();
  p.done(new PeekFailure('peek_timeout', protocol, `head not complete within ${p.options.peekTimeout}ms`), undefined);
}

/** `peekSocket` with a callback (the per-connection hot path: no promise); `done` runs once. */
export function peekThen(socket: Socket, options: PeekOptions, done: PeekDone): void {
  (socket as PeekSocket)[kPeek] = new Peek(socket, options, done);
  socket.on('data', peekData);
  socket.on('end', peekEnd);
  socket.on('error', peekError);
  socket.on('close', peekClose);
  socket.resume();
}
