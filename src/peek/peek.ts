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
import { isSwitchboardError, type ResultCode } from '../errors.ts';
import type { ProxyHeader } from '../proxy-protocol/index.ts';
import { GrowBuffer, type PeekWork } from './grow-buffer.ts';
import type { PathNormalization } from './path.ts';
import { type H2cMode, type Sniffed, type SniffedKind, Sniffer, type TlsMode } from './sniff.ts';

export type { PeekWork } from './grow-buffer.ts';

/** What the peek found: the sniffed head, the bytes to replay, and the PROXY header if any. */
export type Peeked = Sniffed & { readonly buffer: Buffer; readonly proxy: ProxyHeader | undefined };

/** The peek did not produce a routable head: answer with `result` (or just close). */
export class PeekFailure extends Error {
  readonly result: ResultCode | 'client_closed';
  /** Which protocol the bytes looked like, to pick how to answer. */
  readonly protocol: SniffedKind | 'proxy' | 'unknown';
  /** HTTP/2 error code for a GOAWAY (h2c only). */
  readonly h2Code: number | undefined;
  constructor(result: PeekFailure['result'], protocol: PeekFailure['protocol'], message: string, h2Code?: number) {
    super(message);
    this.result = result;
    this.protocol = protocol;
    this.h2Code = h2Code;
  }
}

export interface PeekOptions {
  readonly peekTimeout: number;
  readonly maxHeaderBytes: number;
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
}

/** Reads from `socket` until the sniffer decides, the deadline passes, or the client goes away. */
export function peekSocket(socket: Socket, options: PeekOptions): Promise<Peeked> {
  return new Promise((resolve, reject) =>
    peekThen(socket, options, (err, peeked) => (err === undefined ? resolve(peeked!) : reject(err))),
  );
}

/** How a peek ends: a PeekFailure, or what was peeked. */
export type PeekDone = (err: PeekFailure | undefined, peeked: Peeked | undefined) => void;

/** `peekSocket` with a callback (the per-connection hot path: no promise); `done` runs once. */
export function peekThen(socket: Socket, options: PeekOptions, done: PeekDone): void {
  const sniffer = new Sniffer(options.maxHeaderBytes, options.tls, options.h2c, options.paths);
  const buffer = new GrowBuffer(options.maxHeaderBytes, options.work);
  const settle = () => {
    clearTimeout(timer);
    socket.removeListener('data', onData);
    socket.removeListener('end', onEnd);
    socket.removeListener('error', onError);
    socket.removeListener('close', onClose);
    socket.pause();
  };
  const fail = (err: PeekFailure) => {
    settle();
    done(err, undefined);
  };
  let settingsSeen = false;
  const onData = (chunk: Buffer) => {
    const all = buffer.append(chunk);
    if (all.length === 0) return;
    let sniffed: Sniffed | undefined;
    try {
      sniffed = sniffer.decide(all);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      const detail = e as { result?: ResultCode; h2Code?: number };
      fail(new PeekFailure(detail.result ?? 'bad_request', sniffer.kind ?? 'unknown', e.message, detail.h2Code));
      return;
    }
    if (!settingsSeen && sniffer.h2cSettingsEnd !== undefined) {
      settingsSeen = true;
      options.onH2cSettings?.();
    }
    if (sniffed === undefined) return;
    settle();
    // Outside the try: what the caller does next (route, connect) is not a peek failure.
    done(undefined, { ...sniffed, buffer: all, proxy: options.proxy });
  };
  const onEnd = () =>
    fail(new PeekFailure('client_closed', sniffer.kind ?? 'unknown', 'client closed before the head was complete'));
  // A socket destroyed locally (drain, limits) closes without 'end' or 'error'.
  const onClose = () =>
    fail(new PeekFailure('client_closed', sniffer.kind ?? 'unknown', 'connection closed during the peek'));
  const onError = (err: Error) =>
    fail(new PeekFailure('client_closed', sniffer.kind ?? 'unknown', `client error: ${err.message}`));
  const timer = setTimeout(() => {
    const protocol = sniffer.kind ?? (buffer.length === 0 ? 'unknown' : 'http1');
    fail(new PeekFailure('peek_timeout', protocol, `head not complete within ${options.peekTimeout}ms`));
  }, options.peekTimeout);
  socket.on('data', onData);
  socket.on('end', onEnd);
  socket.on('error', onError);
  socket.on('close', onClose);
  socket.resume();
}
