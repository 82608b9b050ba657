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

/** The response bytes for `code`, or undefined for codes answered by closing (proxy_rejected). */
export function errorResponse(code: ResultCode): Buffer | undefined {
  return responses.get(code);
}

/** The HTTP status for `code` (0 = close without a response). */
export function statusOf(code: ResultCode): number {
  return RESULT_STATUS[code];
}
