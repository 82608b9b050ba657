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
  /** `start --pid-file`: the file names a running process, or cannot be written (app/pid-file.ts). */
  | 'SWB_ERR_PID_FILE'
  | 'SWB_ERR_TLS_HELLO'
  | 'SWB_ERR_PROXY_HEADER'
  | 'SWB_ERR_H2'
  /** A user-named file refused: not a regular file, over its size cap, unreadable (src/base/safe-file.ts). */
  | 'SWB_ERR_FILE'
  /** An ACME storage directory cannot be written (app/acme/storage.ts). */
  | 'SWB_ERR_ACME_STORAGE'
  /**
   * An ACME request failed without an answer from the CA (TLS not trusted, connection refused:
   * app/acme/client.ts), or the CA offered no challenge of the configured kind (app/acme/order.ts).
   */
  | 'SWB_ERR_ACME'
  /** The client closed before its head was complete (a peek's end: src/peek/peek.ts); nothing is answered. */
  | 'SWB_ERR_CLIENT_CLOSED'
  /**
   * A certificate and key, or a CA file, that make no TLS context: an issued certificate
   * (src/tls/issued.ts), a cluster's `tls.ca` (src/tls/upstream.ts).
   */
  | 'SWB_ERR_CERTIFICATE'
  /** A worker thread's prepared reload, dropped because the main thread aborted it (app/worker/entry.ts). */
  | 'SWB_ERR_RELOAD_ABORTED'
  /** A bad argument: `switchboard route` exits 2, the dashboard's explain answers 400 (app/explain/explain.ts). */
  | 'SWB_ERR_USAGE'
  /** The admin API's 404 answers: no such resource, no such backend (app/admin/backend-control.ts). */
  | 'SWB_ERR_NOT_FOUND'
  | 'SWB_ERR_BACKEND_NOT_FOUND'
  /**
   * The fleet's etcd refused or could not be reached (app/fleet/): an id another live router
   * holds, a call past `fleet.etcd.dialTimeout`, a TLS file that cannot be read.
   */
  | 'SWB_ERR_FLEET'
  /**
   * A broken internal invariant (a bug, never bad input): `InternalError`. `isSwitchboardError`
   * is false for it, so it is handled as any unexpected error (rethrown, `internal error`, exit 1).
   */
  | 'SWB_ERR_INTERNAL';

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

/** The error code of a wire result: `bad_request` → `SWB_ERR_BAD_REQUEST`. */
export function resultErrorCode(result: ResultCode): ErrorCode {
  return `SWB_ERR_${result.toUpperCase()}` as ErrorCode;
}

/** A broken internal invariant: a bug, not bad input (STYLE §11), thrown with code `SWB_ERR_INTERNAL`. */
export class InternalError extends SwitchboardError {
  constructor(message: string) {
    super('SWB_ERR_INTERNAL', message);
    this.name = 'InternalError';
  }
}

/**
 * Whether `e` is an expected failure: a typed error of bad input (config, arguments, bytes from a
 * peer). An `InternalError` is a bug, so it is not: callers that answer or report bad input
 * rethrow it, and the CLI prints it as an internal error (app/exit.ts).
 */
export function isSwitchboardError(e: unknown): e is SwitchboardError {
  return e instanceof SwitchboardError && e.code !== 'SWB_ERR_INTERNAL';
}
