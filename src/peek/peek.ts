/**
 * Peek, decide, replay (STYLE §9): read the first bytes of a connection into a bounded buffer
 * under one deadline, until a detector can say where the traffic goes.
 *
 *   socket ──data──► chunks ──concat──► buffer ──sniff──► http1 head │ need more │ error
 *                      ▲                                     │
 *                      └──────────── need more ◄─────────────┘
 *
 * The buffer handed on holds every byte read so far: the head and whatever followed it in the
 * same reads. The socket is paused when the promise settles, so nothing more is read until the
 * caller decides.
 */
import type { Socket } from 'node:net';
import { peerError, type ResultCode, SwitchboardError } from '../errors.ts';
import { type Http1Head, peekHttp1 } from './http1.ts';

/** What the peek found. */
export type Peeked = { readonly kind: 'http1'; readonly head: Http1Head; readonly buffer: Buffer };

/** The peek did not produce a routable head: answer with `result` (or just close). */
export class PeekFailure extends Error {
  readonly result: ResultCode | 'client_closed';
  /** Which protocol the bytes looked like, to pick how to answer. */
  readonly protocol: 'http1' | 'tls' | 'h2c' | 'unknown';
  constructor(result: ResultCode | 'client_closed', protocol: PeekFailure['protocol'], message: string) {
    super(message);
    this.result = result;
    this.protocol = protocol;
  }
}

export interface PeekLimits {
  readonly peekTimeout: number;
  readonly maxHeaderBytes: number;
}

/** Tries to decide on `buf`; undefined = need more bytes. Throws SwitchboardError on bad input. */
export function decide(buf: Buffer, limits: PeekLimits): Omit<Peeked, 'buffer'> | undefined {
  const first = buf[0]!;
  if (first === 0x16) throw peerError('bad_request', 'tls: TLS is not routed on this listener yet');
  const head = peekHttp1(buf, limits.maxHeaderBytes);
  return head === undefined ? undefined : { kind: 'http1', head };
}

/** Reads from `socket` until `decide` answers, the deadline passes, or the client goes away. */
export function peekSocket(socket: Socket, limits: PeekLimits): Promise<Peeked> {
  return new Promise((resolve, reject) => {
    let buffer: Buffer | undefined;
    const finish = (err: PeekFailure | undefined, result?: Omit<Peeked, 'buffer'>) => {
      clearTimeout(timer);
      socket.removeListener('data', onData);
      socket.removeListener('end', onEnd);
      socket.removeListener('error', onError);
      socket.pause();
      if (err !== undefined) reject(err);
      else resolve({ ...result!, buffer: buffer! } as Peeked);
    };
    const onData = (chunk: Buffer) => {
      buffer = buffer === undefined ? chunk : Buffer.concat([buffer, chunk]);
      let result: Omit<Peeked, 'buffer'> | undefined;
      try {
        result = decide(buffer, limits);
      } catch (e) {
        if (e instanceof SwitchboardError) {
          const r = (e as SwitchboardError & { result?: ResultCode }).result ?? 'bad_request';
          finish(new PeekFailure(r, buffer[0] === 0x16 ? 'tls' : 'http1', e.message));
          return;
        }
        throw e;
      }
      if (result !== undefined) finish(undefined, result);
    };
    const onEnd = () => {
      finish(new PeekFailure('client_closed', 'unknown', 'client closed before the head was complete'));
    };
    const onError = (err: Error) => finish(new PeekFailure('client_closed', 'unknown', `client error: ${err.message}`));
    const timer = setTimeout(() => {
      const protocol = buffer !== undefined && buffer[0] === 0x16 ? 'tls' : 'http1';
      finish(new PeekFailure('peek_timeout', protocol, `head not complete within ${limits.peekTimeout}ms`));
    }, limits.peekTimeout);
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', onError);
    socket.resume();
  });
}
