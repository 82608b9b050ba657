/**
 * Typed errors. Bad input (config, arguments, bytes from a peer) is a `SwitchboardError` with a
 * stable code; callers branch on `code`, never on message text (STYLE §11). Each wire-facing
 * code maps one to one onto the `X-Switchboard-Error` value of DESIGN's error table.
 */

/** Result codes a connection or request can end with (access log `result`, X-Switchboard-Error). */
export const RESULT_STATUS = {
  bad_request: 400,
  peek_timeout: 408,
  uri_too_long: 414,
  header_too_large: 431,
  method_not_allowed: 405,
  no_route: 404,
  blackhole: 503,
  no_backend: 503,
  connect_failed: 502,
  connect_timeout: 504,
  /** Per-request routing: a backend's response the router cannot frame, or a 101 nobody asked for. */
  bad_response: 502,
  /**
   * The upstream connection was lost before any byte of the response went out (the http2 panel's
   * streams; per-request routing on the net panel, after a retry where one is allowed).
   */
  upstream_reset: 502,
  overloaded: 503,
  proxy_rejected: 0,
  /** The router answered an ACME challenge itself (HTTP-01 key authorization, TLS-ALPN-01 handshake). */
  acme_challenge: 200,
  // The admin listener's refusals (app/admin/auth.ts); never in the access log.
  unauthorized: 401,
  host_not_allowed: 403,
  cross_origin: 403,
  unsupported_media_type: 415,
} as const;

export type ResultCode = keyof typeof RESULT_STATUS;

/** Error codes: `SWB_ERR_<RESULT>` for wire results, plus the non-wire ones. */
export type ErrorCode =
  | `SWB_ERR_${Uppercase<ResultCode>}`
  | 'SWB_ERR_CONFIG'
  | 'SWB_ERR_PLUGIN'
  | 'SWB_ERR_CONDITION'
  | 'SWB_ERR_ADDRESS_BOOK'
  /** A listening socket could not be bound (address in use, no permission). */
  | 'SWB_ERR_LISTEN'
  | 'SWB_ERR_TLS_HELLO'
  | 'SWB_ERR_PROXY_HEADER'
  | 'SWB_ERR_H2'
  /** A user-named file refused: not a regular file, over its size cap, unreadable (src/base/safe-file.ts). */
  | 'SWB_ERR_FILE'
  /** An ACME storage directory cannot be written (app/acme/storage.ts). */
  | 'SWB_ERR_ACME_STORAGE'
  /** An ACME request failed without an answer from the CA (TLS not trusted, connection refused: app/acme/client.ts). */
  | 'SWB_ERR_ACME';

export class SwitchboardError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = 'SwitchboardError';
  }
}

/** An error made by `peerError`: bad bytes from a peer, with the wire result the router answers. */
export type PeerError = SwitchboardError & { readonly result: ResultCode };

/** True for an error made by `peerError`: its `result` is the router's answer to the peer. */
export function isPeerError(e: unknown): e is PeerError {
  return e instanceof SwitchboardError && typeof (e as Partial<PeerError>).result === 'string';
}

/** The error for a wire result code: `peerError('bad_request', 'http1: bare LF at byte 14')`. */
export function peerError(result: ResultCode, message: string): PeerError {
  const e = new SwitchboardError(`SWB_ERR_${result.toUpperCase()}` as ErrorCode, message) as SwitchboardError & {
    result: ResultCode;
  };
  e.result = result;
  return e;
}

export function isSwitchboardError(e: unknown): e is SwitchboardError {
  return e instanceof SwitchboardError;
}
