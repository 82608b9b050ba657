/**
 * How a per-request connection ends toward its client, as helpers taking values (the driver
 * decides when; per-request-driver.ts): the router's answer written with a linger, a graceful
 * close that drops what the client still sends, and the connection's access line and end.
 */
import type { Socket } from 'node:net';
import { RESULT_STATUS, type ResultCode } from '../../src/base/errors.ts';
import { endRecord, logConnection } from '../../src/data-path/access-record.ts';
import { discardUpTo, endWithLinger, errorResponse, LINGER_BYTES, statusOf } from '../../src/data-path/answer.ts';
import { stopReadingClient } from './per-request-client-events.ts';
import type { PerRequestStart } from './per-request-start.ts';

/**
 * Writes the router's answer for `code` (Connection: close) and ends the client after a linger,
 * whose timer it returns; a code without an answer, or a client already gone, is destroyed.
 */
export function answerClient(client: Socket, code: ResultCode, reason?: string): NodeJS.Timeout | undefined {
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
export function reportConnectionEnd(start: PerRequestStart, client: Socket, result: string): void {
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
