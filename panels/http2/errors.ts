/**
 * The router's own answers on the `http2` panel (DESIGN "What the router itself answers"), as
 * HTTP responses on the stream instead of a closed connection: the status of DESIGN's table
 * and `x-switchboard-error: <code>`. gRPC clients read only `grpc-status`, so a gRPC request
 * (content-type `application/grpc…`) gets `:status 200` with the gRPC code in trailers, mapped
 * as gRPC's own HTTP-to-gRPC table does (grpc/doc/http-grpc-status-mapping.md).
 */
import { RESULT_STATUS, type ResultCode } from '../../src/base/errors.ts';
import { answerBody } from '../../src/data-path/answer.ts';
import { type Down, H1Down } from './down.ts';

/** gRPC status codes used here (grpc/doc/statuscodes.md). */
export const GRPC = {
  UNKNOWN: 2,
  RESOURCE_EXHAUSTED: 8,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNIMPLEMENTED: 12,
  UNAUTHENTICATED: 16,
} as const;

/** True when a request's content-type says gRPC. */
export function isGrpc(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/grpc(?:$|[+;])/i.test(contentType);
}

/**
 * What this panel answers besides DESIGN's table: `upstream_reset`, 502, when the upstream
 * connection was lost before any of the response went out (the splicing panels close the
 * client connection instead; a stream can still be answered).
 */
export type AnswerCode = ResultCode | 'upstream_reset';

function httpStatusOf(code: AnswerCode): number {
  return code === 'upstream_reset' ? 502 : RESULT_STATUS[code];
}

/** The gRPC status for a router result code, from its HTTP status (gRPC's mapping table). */
export function grpcStatusOf(code: AnswerCode): number {
  switch (httpStatusOf(code)) {
    case 400:
      return GRPC.INTERNAL;
    case 401:
      return GRPC.UNAUTHENTICATED;
    case 404:
      return GRPC.UNIMPLEMENTED;
    case 431:
      return GRPC.RESOURCE_EXHAUSTED;
    case 502:
    case 503:
    case 504:
      return GRPC.UNAVAILABLE;
    default:
      return GRPC.UNKNOWN;
  }
}

/** The HTTP status the router answers for `code` (gRPC requests: always 200). */
export function statusFor(code: AnswerCode, grpc: boolean): number {
  return grpc ? 200 : httpStatusOf(code) || 502;
}

/** The body of the router's answer to a non-gRPC request (gRPC answers have none). */
export function errorBody(code: AnswerCode, reason?: string): string {
  return code === 'upstream_reset' ? `${code}\n` : answerBody(code, reason);
}

/**
 * The access record of a router answer: `status` is the result's HTTP status even where a gRPC
 * client got `:status 200` (`grpcStatus` says what it got), and `bytesOut` counts the body sent.
 * `sent` is what `respondError` returned (0: the response had started; nothing is changed).
 */
export function recordAnswer(
  record: { bytesOut: number; grpcStatus?: number },
  code: AnswerCode,
  grpc: boolean,
  sent: number,
  reason?: string,
): number {
  if (sent === 0) return 0;
  if (!grpc) {
    record.bytesOut += Buffer.byteLength(errorBody(code, reason));
    return sent;
  }
  record.grpcStatus = grpcStatusOf(code);
  return httpStatusOf(code) || 502;
}

/**
 * Answers the router error `code` on `res` and ends it. Returns the HTTP status sent, or 0
 * when the response had already started (then the stream is reset instead: see `abortResponse`).
 */
export function respondError(down: Down, code: AnswerCode, grpc: boolean, reason?: string): number {
  if (down.headersSent) {
    abortResponse(down);
    return 0;
  }
  const status = statusFor(code, grpc);
  if (grpc) {
    down.respond(status, ['content-type', 'application/grpc', 'x-switchboard-error', code], false, true);
    down.end(undefined, { 'grpc-status': String(grpcStatusOf(code)), 'grpc-message': `switchboard: ${code}` });
    return status;
  }
  const body = errorBody(code, reason);
  const headers = [
    'content-type',
    'text/plain',
    'content-length',
    String(Buffer.byteLength(body)),
    'x-switchboard-error',
    code,
  ];
  down.respond(status, headers, false, false);
  down.end(body);
  return status;
}

/** NGHTTP2_INTERNAL_ERROR: what a stream is reset with when the upstream broke mid-response. */
export const H2_INTERNAL_ERROR = 2;

/**
 * Ends a response that can no longer be answered properly: an HTTP/2 stream is reset with
 * `h2Code` (RST_STREAM), an HTTP/1.1 connection is destroyed so the client sees a truncation.
 */
export function abortResponse(down: Down, h2Code: number = H2_INTERNAL_ERROR): void {
  down.abort(h2Code);
}

/**
 * Ends `res` after its upstream connection was lost. Before the head: 502 `upstream_reset`
 * (gRPC: grpc-status UNAVAILABLE). After the head of a gRPC response: trailers with
 * grpc-status UNAVAILABLE, so the call fails as retryable instead of INTERNAL. Otherwise the
 * stream is reset (HTTP/1: the connection destroyed). Returns the status sent, 0 if none.
 */
export function endUpstreamLost(down: Down, grpc: boolean): number {
  if (!down.headersSent) return respondError(down, 'upstream_reset', grpc);
  if (grpc && down.h2 && !down.ended && !down.body.destroyed) {
    down.end(undefined, { 'grpc-status': String(GRPC.UNAVAILABLE), 'grpc-message': 'switchboard: upstream_reset' });
    return 0;
  }
  abortResponse(down);
  return 0;
}

/**
 * Ends a stream that hit a bug; returns the status sent (0 for none). HTTP/2: RST_STREAM
 * INTERNAL_ERROR, the session's other streams untouched. HTTP/1.1: a 500 with `Connection:
 * close` while nothing of the response went out (node sends it after the responses pipelined
 * before it, so those are not cut), else the connection is closed.
 */
export function abortBroken(down: Down): number {
  if (!(down instanceof H1Down)) {
    abortResponse(down, H2_INTERNAL_ERROR);
    return 0;
  }
  const { req, res } = down;
  if (res.headersSent) {
    abortResponse(down);
    req.socket?.destroy();
    return 0;
  }
  const body = 'internal_error\n';
  res.writeHead(500, {
    'content-type': 'text/plain',
    'content-length': String(body.length),
    'x-switchboard-error': 'internal_error',
    connection: 'close',
  });
  res.end(body);
  return 500;
}
