/**
 * Types only: the driver's state and what its parts may ask of it (per-request-driver.ts
 * implements them; the parts below it import this file, never the driver, so no file cycle).
 */
import type { ResultCode } from '../../src/base/errors.ts';
import type { Http1Head } from '../../src/peek/http1.ts';

/**
 * head: reading a head · body: forwarding a body · wait: the response is awaited ·
 * connecting: a new upstream connection is being opened · answering: a policy's answer is being
 * written and the connection goes on after it · tunnel: spliced · closing: ending.
 */
export type DriverState = 'head' | 'body' | 'wait' | 'connecting' | 'answering' | 'tunnel' | 'closing';

/** What the framing of the client's bytes (per-request-framing.ts) asks of the driver. */
export interface FramingSteps {
  /** Heads and bodies are framed in `head` and `body` only; other states keep the bytes. */
  readonly state: DriverState;
  /**
   * Routes the complete `head` at offset 0 of `view`: the bytes of `view` that now belong to
   * the request on the current link (head + body in hand), or -1 when it was refused or waits
   * for a connect.
   */
  routeHead(head: Http1Head, view: Buffer): number;
  /** Request bytes framed: written to the current link. */
  forward(bytes: Buffer): void;
  /** The request's last byte was forwarded. */
  requestSent(): void;
  /** A head that cannot be parsed: answered with `code`; `read`: all the bytes read of it. */
  refuseHead(code: ResultCode, reason: string, read: number): void;
  /** A request body the framing cannot follow, in bytes read after its head went upstream. */
  bodyFailed(reason: string): void;
}
