/**
 * The router's own HTTP/1 answers (DESIGN "What the router itself answers"): short,
 * `Connection: close`, with `X-Switchboard-Error: <code>`. Built once per code at load time.
 */
import { STATUS_CODES } from 'node:http';
import { RESULT_STATUS, type ResultCode } from './errors.ts';

const responses = new Map<ResultCode, Buffer>();
for (const [code, status] of Object.entries(RESULT_STATUS) as [ResultCode, number][]) {
  if (status === 0) continue;
  const body = `${code}\n`;
  responses.set(
    code,
    Buffer.from(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n` +
        `Connection: close\r\nX-Switchboard-Error: ${code}\r\n\r\n${body}`,
      'latin1',
    ),
  );
}

/**
 * The response bytes for `code`, or undefined for codes answered by closing (proxy_rejected).
 * `acme_challenge` is the one answer with a body of its own: `reason` is the key authorization.
 */
export function errorResponse(code: ResultCode, reason?: string): Buffer | undefined {
  if (code === 'acme_challenge' && reason !== undefined) return challengeResponse(reason);
  return responses.get(code);
}

/** The body of the router's own answer for `code` (the HTTP/2 panel writes it itself). */
export function answerBody(code: ResultCode, reason?: string): string {
  return code === 'acme_challenge' && reason !== undefined ? reason : `${code}\n`;
}

/** HTTP-01 (RFC 8555 §8.3): 200 with the key authorization as the body. */
function challengeResponse(keyAuthorization: string): Buffer {
  const body = Buffer.from(keyAuthorization, 'latin1');
  return Buffer.concat([
    Buffer.from(
      `HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n` +
        'Connection: close\r\nX-Switchboard-Error: acme_challenge\r\n\r\n',
      'latin1',
    ),
    body,
  ]);
}

/** The HTTP status for `code` (0 = close without a response). */
export function statusOf(code: ResultCode): number {
  return RESULT_STATUS[code];
}
