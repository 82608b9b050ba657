/**
 * How a per-request connection ends (the driver decides when; per-request-driver.ts): its
 * result (the first non-ok end), the router's answer written with a linger, a graceful close
 * that drops what the client still sends, and, once, the connection's access line and end.
 *
 *   answer / close / abort ─► result kept (the first non-ok) ─► … client 'close' ─► report():
 *     out of the runtime's drainable members, linger cleared, access line, `conn.done()`
 */
import type { Socket } from 'node:net';
import { RESULT_STATUS, type ResultCode } from '../../src/base/errors.ts';
import type { MemberNode } from '../../src/base/member-list.ts';
import { endRecord, logConnection } from '../../src/data-path/access-record.ts';
import { discardUpTo, endWithLinger, errorResponse, LINGER_BYTES, statusOf } from '../../src/data-path/answer.ts';
import type { Drainable } from '../../src/data-path/drain.ts';
import { stopReadingClient } from './per-request-client-events.ts';
import type { PerRequestStart } from './per-request-start.ts';

/** The end of one connection: its result, its answer's linger, its report. */
export class ConnectionEnd {
  readonly #start: PerRequestStart;
  /** The connection's result: its first non-ok end. */
  #result = 'ok';
  #linger: NodeJS.Timeout | undefined;
  /** The connection's end was reported (once, even after an internal error). */
  #reported = false;
  /** The connection's place among the runtime's drainable members (src/base/member-list.ts). */
  #drainNode: MemberNode<Drainable> | undefined;

  /** The end of `start`'s connection, whose driver `member` is drainable until it is reported. */
  constructor(start: PerRequestStart, member: Drainable) {
    this.#start = start;
    this.#drainNode = start.runtime.drain.add(member);
  }

  /** No end other than `ok` so far. */
  get ok(): boolean {
    return this.#result === 'ok';
  }

  /** The connection ends with `result`, unless it ended with another than `ok` before. */
  keep(result: string): void {
    if (this.#result === 'ok') this.#result = result;
  }

  /** A tunnel's end is the connection's (`reason` goes to its record). */
  tunnelled(result: string, reason: string | undefined): void {
    this.#result = result;
    if (reason !== undefined) this.#start.connectionRecord.reason = reason;
  }

  /** Writes the router's answer for `code` and ends the client after a linger (answerClient). */
  answer(code: ResultCode, reason: string | undefined): void {
    this.#linger = answerClient(this.#start.client, code, reason);
  }

  /** A `policies:` rule fired on a request of the connection: the connection's line names the first one. */
  firedOn(rule: string, action: string): void {
    const record = this.#start.connectionRecord;
    if (record.policy !== undefined) return;
    record.policy = rule;
    record.action = action;
  }

  /** Writes `bytes` (a policy's answer, `Connection: close`) and ends the client after a linger. */
  answerWith(bytes: Buffer): void {
    const client = this.#start.client;
    if (client.destroyed) return;
    stopReadingClient(client);
    this.#linger = endWithLinger(client, bytes);
  }

  /** The connection's result, once: its access line (connection lines) and its end. */
  report(): void {
    if (this.#reported) return;
    this.#reported = true;
    const start = this.#start;
    start.runtime.drain.remove(this.#drainNode);
    this.#drainNode = undefined;
    if (this.#linger !== undefined) clearTimeout(this.#linger);
    reportConnectionEnd(start, start.client, this.#result);
  }
}

/**
 * Writes the router's answer for `code` (Connection: close) and ends the client after a linger,
 * whose timer it returns; a code without an answer, or a client already gone, is destroyed.
 */
function answerClient(client: Socket, code: ResultCode, reason?: string): NodeJS.Timeout | undefined {
  const bytes = errorResponse(code, reason);
  if (bytes === undefined || client.destroyed) {
    client.destroy();
    return undefined;
  }
  stopReadingClient(client);
  return endWithLinger(client, bytes);
}

/** Ends the client gracefully after what was written (its idle timeout still applies). */
export function closeClient(client: Socket): void {
  stopReadingClient(client);
  client.end();
  // What the client still sends is read and dropped, up to the linger's bound (src/data-path/answer.ts).
  discardUpTo(client, LINGER_BYTES);
}

/** The connection's access record ended with `result` and logged (connection lines), then its end reported. */
function reportConnectionEnd(start: PerRequestStart, client: Socket, result: string): void {
  const record = start.connectionRecord;
  endRecord(record, start.conn.acceptedAt, result, isResultCode(result) ? statusOf(result) : undefined);
  record.bytesIn = client.bytesRead;
  record.bytesOut = client.bytesWritten;
  logConnection(record, start.requestLines ? undefined : start.runtime.accessLog);
  start.conn.done();
}

/** True when a connection's result is a result code the router answers with a status. */
function isResultCode(result: string): result is ResultCode {
  return Object.hasOwn(RESULT_STATUS, result);
}
