/**
 * The exchange in flight on a per-request connection (at most one: per-request.ts step 1) and
 * the bookkeeping of its record from its route to its end: the link it is bound to, the
 * response's status, and what the line counts when it completes, is answered by the router, or
 * ends otherwise (the driver decides which; per-request-driver.ts).
 */
import type { ResultCode } from '../../src/base/errors.ts';
import type { Request } from '../../src/contracts/types.ts';
import { errorResponse, statusOf } from '../../src/data-path/answer.ts';
import type { Http1Head } from '../../src/peek/http1.ts';
import { tracing } from '../../src/tracing/tracer.ts';
import type { Exchange } from './exchange.ts';
import { ExchangeRecords } from './per-request-records.ts';
import type { PerRequestStart } from './per-request-start.ts';

/** The exchange in flight of one connection, if any. */
export class ExchangeInFlight {
  readonly #records: ExchangeRecords;
  #current: Exchange | undefined;

  constructor(start: PerRequestStart) {
    this.#records = new ExchangeRecords(start);
  }

  /** The exchange in flight (undefined between exchanges). */
  get current(): Exchange | undefined {
    return this.#current;
  }

  /** A routed head's exchange is in flight from now on. */
  open(head: Http1Head, request: Request): Exchange {
    this.#current = this.#records.open(head, request);
    return this.#current;
  }

  /** Request bytes forwarded: counted in the line's `bytesIn`. */
  countIn(bytes: number): void {
    if (this.#current !== undefined) this.#current.record.bytesIn += bytes;
  }

  /** The exchange is bound to a link to `backend` (`attempts`: of a new connection). */
  bound(backend: string, attempts: number | undefined): Exchange {
    const ex = this.#current!;
    this.#records.bound(ex, backend, attempts);
    return ex;
  }

  /** The attempts of the new connection the exchange waited for (before it is bound, or refused). */
  connectAttempts(attempts: number): void {
    this.#records.connectAttempts(this.#current!, attempts);
  }

  /** The attempts of a resend's new connection, added to the first ones; the sum. */
  resendAttempts(attempts: number): number {
    const record = this.#current!.record;
    record.attempts = (record.attempts ?? 1) + attempts;
    return record.attempts;
  }

  /** A response head: a final status (or 101) is the exchange's. */
  responseStatus(status: number): void {
    const current = this.#current;
    if (current === undefined) return;
    // The first response byte (a head, 1xx included) ends the attempt's CLIENT span (src/tracing/).
    const tracer = tracing.current;
    if (tracer !== undefined) tracer.responded(current.record);
    if (status >= 200 || status === 101) current.record.status = status;
  }

  /** The exchange ended well (`bytesOut`: the response bytes its link forwarded): logged `ok`, no longer in flight. */
  completed(bytesOut: number): Exchange {
    const ex = this.#current!;
    this.#current = undefined;
    ex.record.bytesOut = bytesOut;
    ex.finish('ok');
    return ex;
  }

  /**
   * The router answers `code` for the exchange in flight, or for a head that has none (it
   * could not be parsed): `read`, the request's bytes read and not forwarded, counted in
   * `bytesIn`, and the answer in `bytesOut` when the client can still get it (`clientOpen`).
   */
  answered(code: ResultCode, reason: string | undefined, read: number, clientOpen: boolean): void {
    const ex = this.#current ?? this.#records.forAnswer();
    this.#current = undefined;
    ex.record.bytesIn += read;
    // The access line counts the answer the client gets (nothing of a response went out before it).
    if (clientOpen) ex.record.bytesOut += errorResponse(code)?.length ?? 0;
    ex.finish(code, statusOf(code), reason);
  }

  /**
   * A `policies:` rule fired on the exchange in flight (its record names the rule): `read`, the
   * request's bytes read and not forwarded, and `bytesOut`, the answer's (0 for a close).
   */
  policyEnded(result: string, status: number | undefined, reason: string, read: number, bytesOut: number): void {
    const ex = this.#current!;
    this.#current = undefined;
    ex.record.bytesIn += read;
    ex.record.bytesOut += bytesOut;
    ex.finish(result, status, reason);
  }

  /** The exchange in flight, if any, ends with `result` and is no longer in flight; it is returned. */
  end(result: string, status?: number, reason?: string): Exchange | undefined {
    const ex = this.#current;
    if (ex === undefined) return undefined;
    this.#current = undefined;
    ex.finish(result, status, reason);
    return ex;
  }
}
