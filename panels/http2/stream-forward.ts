/**
 * The forwarding half of one stream (stream.ts routes it, then hands it here): the request body
 * into the exchange, the response head, body and trailers back, resets both ways.
 *
 * One object per stream that is itself the exchange's event listener and the after-reads
 * callback (after-reads.ts), so a stream allocates no closure per event: the profile of issue 18
 * counted a dozen closures and their contexts per stream here, each a young-generation object
 * for the scavenger. Listeners node calls with its own `this` (the client stream's 'close', the
 * response body's 'data') are the only closures left.
 */
import type { Readable, Writable } from 'node:stream';
import type { AccessRecord } from '../../src/base/log.ts';
import { tracing } from '../../src/tracing/tracer.ts';
import type { ResponseJudge } from '../../src/upstream/outlier-judge.ts';
import type { AfterReads } from './after-reads.ts';
import { afterReads } from './after-reads.ts';
import type { Down } from './down.ts';
import { abortBroken, abortResponse, endUpstreamLost, H2_INTERNAL_ERROR, recordAnswer } from './errors.ts';
import { type Exchange, type ExchangeEvents, H2_CANCEL, type UpstreamResponse } from './exchange.ts';
import { trailerFields } from './headers.ts';

const NO_FIELDS: Readonly<Record<string, string>> = Object.freeze(Object.create(null));

/** What a forwarded stream reports to: its access record, and its one access line. */
export interface StreamLog {
  readonly record: AccessRecord;
  log(result: string, status?: number, reason?: string): void;
}

/**
 * Copies `from` into `to` with backpressure, counting bytes (one listener, where `pipe()` adds
 * six per stream); the end of `from` is not forwarded (the exchange reports completion
 * separately, with trailers). Returns what stops the copy.
 */
function copy(from: Readable, to: Writable, count: (n: number) => void): () => void {
  const resume = () => from.resume();
  const onData = (c: Buffer) => {
    count(c.length);
    if (!to.write(c)) {
      from.pause();
      to.once('drain', resume);
    }
  };
  from.on('data', onData);
  return () => {
    from.removeListener('data', onData);
    to.removeListener('drain', resume);
  };
}

/** Pipes the request into the exchange and the response back, with resets both ways. */
export class Forwarding implements ExchangeEvents, AfterReads {
  readonly #down: Down;
  readonly #exchange: Exchange;
  readonly #stream: StreamLog;
  readonly #grpc: boolean;
  /** The cluster's `outlierStatus` judge of the backend (src/upstream/outlier-judge.ts), if any. */
  readonly #judge: ResponseJudge | undefined;
  #done = false;
  #status = 0;
  #ended = false;
  #stopRequest: (() => void) | undefined = undefined;
  /**
   * An HTTP/2 head waits for the end of this turn's reads (after-reads.ts); what completed it
   * meanwhile waits here (`#held`: the head waiting; `#heldEnd`: the trailers it ended with).
   */
  #held: UpstreamResponse | undefined = undefined;
  #heldEnd: Record<string, string> | undefined = undefined;

  constructor(down: Down, exchange: Exchange, stream: StreamLog, grpc: boolean, judge: ResponseJudge | undefined) {
    this.#down = down;
    this.#exchange = exchange;
    this.#stream = stream;
    this.#grpc = grpc;
    this.#judge = judge;
  }

  /** Starts both directions. */
  start(): void {
    const down = this.#down;
    const exchange = this.#exchange;
    const req = down.body;
    if (down.h2 && down.bodyLength === 0) {
      // No body (END_STREAM on the client's HEADERS): the upstream request is complete already.
      exchange.finish(NO_FIELDS);
    } else {
      const record = this.#stream.record;
      this.#stopRequest = copy(req, exchange.body, (n) => {
        record.bytesIn += n;
      });
      req.on('end', () => exchange.finish(trailerFields(down.requestTrailers())));
      // An HTTP/2 stream has its error listener already (down.ts).
      if (!down.h2) req.on('error', () => {});
    }
    down.onClose(() => this.#downClosed());
    exchange.listen(this);
    req.resume();
  }

  #downClosed(): void {
    if (this.#done) return;
    this.#done = true;
    // A reset (or a dropped HTTP/1 connection) closes the response before it completed.
    const down = this.#down;
    const code = down.closeCode();
    if (this.#ended && down.flushed()) {
      this.#stream.log('ok', this.#status);
      return;
    }
    // The client reset its stream (or dropped its connection) before the response was complete.
    this.#exchange.cancel(code === 0 ? H2_CANCEL : code);
    this.#stream.log('client_reset', this.#status || undefined, `client closed the stream (code ${code})`);
  }

  /** The response head, sent with `trailers` (the response may end with trailer fields). */
  #respond(up: UpstreamResponse, endStream: boolean, trailers: boolean): boolean {
    try {
      this.#down.respond(up.status, up.headers, endStream, trailers);
      return true;
    } catch (e) {
      this.#done = true;
      this.#exchange.cancel(H2_INTERNAL_ERROR);
      abortResponse(this.#down);
      this.#stream.log('upstream_reset', this.#status, `response head not forwardable: ${(e as Error).message}`);
      return false;
    }
  }

  #copyResponse(up: UpstreamResponse): void {
    const record = this.#stream.record;
    copy(up.body, this.#down.out, (n) => {
      record.bytesOut += n;
    });
  }

  /**
   * The held head goes out. A response complete by then without trailers is opened without
   * `waitForTrailers`: no 'wantTrailers' callback, `sendTrailers` or node setImmediate per
   * stream (its body and end are written as usual: written together in one tick, node would
   * close the stream before the write's completion and build an ERR_STREAM_DESTROYED per stream).
   */
  afterReads(): void {
    const up = this.#held;
    this.#held = undefined;
    if (this.#done || up === undefined) return;
    try {
      const known = up.completeWithoutTrailers?.() === true;
      if (!this.#respond(up, false, !known)) return;
      this.#copyResponse(up);
      const end = this.#heldEnd;
      if (end !== undefined) {
        this.#ended = true;
        this.#down.end(undefined, end);
      }
    } catch (err) {
      this.#done = true;
      this.#exchange.cancel(H2_INTERNAL_ERROR);
      this.#stream.log('internal_error', abortBroken(this.#down), String(err));
    }
  }

  response(up: UpstreamResponse): void {
    if (this.#done) return;
    const down = this.#down;
    this.#status = up.status;
    this.#judge?.judge(up.status);
    // The first response byte ends the attempt's CLIENT span (src/tracing/).
    const tracer = tracing.current;
    if (tracer !== undefined) tracer.responded(this.#stream.record);
    if (up.endStream && down.h2) {
      // Trailers-only: one HEADERS frame with END_STREAM, as the backend sent it (gRPC status).
      if (this.#respond(up, true, false)) this.#ended = true;
      return;
    }
    if (down.h2 && up.completeWithoutTrailers !== undefined) {
      this.#held = up;
      afterReads(this);
      return;
    }
    if (this.#respond(up, false, true)) this.#copyResponse(up);
  }

  complete(trailers: Record<string, string>): void {
    if (this.#done || this.#ended) return;
    if (this.#held !== undefined) {
      this.#heldEnd = trailers;
      return;
    }
    this.#ended = true;
    this.#down.end(undefined, trailers);
  }

  failed(h2Code: number, reason: string): void {
    if (this.#done) return;
    this.#done = true;
    this.#stopRequest?.();
    const down = this.#down;
    down.body.resume();
    const status = this.#status;
    if (h2Code !== 0) {
      abortResponse(down, h2Code); // the backend reset the stream: mirror its code
      this.#stream.log('upstream_reset', status || undefined, reason);
      return;
    }
    // The upstream connection was lost: answer while nothing went out, never leave it hanging.
    const answered = recordAnswer(this.#stream.record, 'upstream_reset', this.#grpc, endUpstreamLost(down, this.#grpc));
    this.#stream.log('upstream_reset', answered || status || undefined, reason);
  }
}
