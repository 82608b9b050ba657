/**
 * The framing of a per-request client's bytes into requests: heads (Http1HeadScanner, one
 * taken from scanner-spares.ts while a head is split across reads) and bodies (BodyTracker),
 * with the bytes not framed yet (per-request-pending.ts).
 *
 *   read ─► state head: scan a head ─► complete? ─► driver routes it ─► state body
 *        │  state body: feed the body tracker ─► done? ─► forward, driver: request sent
 *        └─ other states (wait, connecting): kept as pending until the driver resumes
 *
 * 1. Bytes are framed before they are forwarded: a read's framed bytes go upstream in one write.
 * 2. A head or body the framing refuses is reported to the driver (refuseHead, bodyFailed);
 *    it knows nothing else of the driver (FramingSteps, per-request-steps.ts).
 */
import { isPeerError, isSwitchboardError } from '../../src/base/errors.ts';
import { type BodyTracker, releaseTracker } from '../../src/peek/body-tracker.ts';
import type { Http1Head, Http1HeadScanner } from '../../src/peek/http1.ts';
import type { PathNormalization } from '../../src/peek/path.ts';
import { releaseHeadScanner, takeHeadScanner } from '../../src/peek/scanner-spares.ts';
import { PendingBytes } from './per-request-pending.ts';
import type { FramingSteps } from './per-request-steps.ts';

/** The header limits a framer scans heads with. */
export interface FramingLimits {
  readonly maxHeaderBytes: number;
  readonly maxHeaderCount: number;
}

/** The request framing of one client connection. */
export class RequestFramer {
  readonly #steps: FramingSteps;
  readonly #limits: FramingLimits;
  readonly #pathNormalization: PathNormalization;
  /** The scanner of a head split across reads (scanner-spares.ts: none between heads). */
  #scanner: Http1HeadScanner | undefined;
  /** Client bytes not framed yet (a partial head, or what came while the client must wait). */
  readonly pending: PendingBytes;
  /** The framing of the request body being forwarded. */
  #body: BodyTracker | undefined;

  constructor(steps: FramingSteps, limits: FramingLimits, pathNormalization: PathNormalization) {
    this.#steps = steps;
    this.#limits = limits;
    this.#pathNormalization = pathNormalization;
    this.pending = new PendingBytes(limits.maxHeaderBytes);
  }

  /** The routed request's body follows (given back to its spares when done; a refused one is dropped). */
  startBody(body: BodyTracker): void {
    this.#body = body;
  }

  /** A client read: framed after what was pending, or kept while the client must wait. */
  read(chunk: Buffer): void {
    const pending = this.pending;
    const buf = pending.withRead(chunk);
    const state = this.#steps.state;
    if (state === 'head' || state === 'body') this.frame(buf, 0, 0);
    else if (state !== 'closing') pending.keep(buf); // paused states: kept for later
    pending.settle();
  }

  /** Frames what the client sent while the last exchange was in flight. */
  resume(): void {
    const pending = this.pending.take();
    if (pending !== undefined) this.frame(pending, 0, 0);
  }

  /** Frames `buf` from `off`; bytes [from, off) are already framed and still to be forwarded. */
  frame(buf: Buffer, off: number, from: number): void {
    const steps = this.#steps;
    for (;;) {
      if (steps.state === 'body') {
        const body = this.#body!;
        if (!body.done && off < buf.length) {
          try {
            off += body.feed(buf, off);
          } catch (e) {
            if (!isSwitchboardError(e)) throw e;
            steps.bodyFailed(e.message);
            return;
          }
        }
        if (!body.done) break;
        this.#forward(buf, from, off);
        from = off;
        this.#body = undefined;
        releaseTracker(body);
        steps.requestSent();
        continue;
      }
      if (steps.state !== 'head') {
        if (off < buf.length && steps.state !== 'closing') this.pending.keep(buf.subarray(off));
        break;
      }
      if (off >= buf.length) break;
      const view = off === 0 ? buf : buf.subarray(off);
      let head: Http1Head | undefined;
      const limits = this.#limits;
      const scanner =
        this.#scanner ?? takeHeadScanner(limits.maxHeaderBytes, this.#pathNormalization, limits.maxHeaderCount);
      this.#scanner = undefined;
      try {
        head = scanner.feed(view);
      } catch (e) {
        if (!isSwitchboardError(e)) throw e;
        // Everything read of a head that cannot be parsed belongs to it (bytesIn).
        steps.refuseHead(isPeerError(e) ? e.result : 'bad_request', e.message, view.length);
        return;
      }
      if (head === undefined) {
        this.#scanner = scanner; // the rest of the head comes in a later read
        this.pending.keep(view);
        break;
      }
      releaseHeadScanner(scanner);
      const consumed = steps.routeHead(head, view);
      if (consumed < 0) return;
      from = off;
      off += consumed;
    }
    this.#forward(buf, from, off);
  }

  /** Forwards request bytes [from, to) of `buf`. */
  #forward(buf: Buffer, from: number, to: number): void {
    if (to <= from) return;
    this.#steps.forward(from === 0 && to === buf.length ? buf : buf.subarray(from, to));
  }
}
