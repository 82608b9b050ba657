/**
 * The shape of a validated HTTP/1 request head, in a module of its own so that the scanner
 * (http1.ts), the parsed value (http1-head.ts) and the h2c upgrade check can each name it
 * without importing one another.
 */
import type { HeaderPair, RequestBodyFraming } from './http1-fields.ts';

/** A validated HTTP/1 request head. */
export interface Http1Head {
  readonly method: string;
  /** The request-target exactly as sent. */
  readonly target: string;
  readonly versionMinor: 0 | 1;
  /** Raw [name, value] pairs in wire order; values without surrounding OWS. */
  readonly headers: readonly HeaderPair[];
  /** Lower-cased, without port and one trailing dot; IPv6 keeps brackets; '' when absent. */
  readonly host: string;
  readonly port: number | undefined;
  /** Normalised path for matching; '*' for `OPTIONS *`; undefined for CONNECT. */
  readonly path: string | undefined;
  /** Raw query without '?'; '' when absent. */
  readonly query: string;
  /** Bytes from the buffer start through the final CRLFCRLF (a skipped leading CRLF included). */
  readonly headLength: number;
  readonly bodyFraming: RequestBodyFraming;
  /** `Connection: upgrade` together with an Upgrade header. */
  readonly upgrade: boolean;
  /**
   * The protocols the request offers to switch to (lower-cased names, no versions) when
   * `upgrade` is true, else empty: a 101 answer may only announce these (RFC 9110 §7.8).
   */
  readonly upgradeTo: readonly string[];
  /** `Connection: close`, or HTTP/1.0 without `keep-alive`. */
  readonly connectionClose: boolean;
  readonly expectContinue: boolean;
}
