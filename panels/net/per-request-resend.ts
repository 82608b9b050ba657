/**
 * Sending a request once more when its reused link fails before any response byte.
 *
 * A reused link may be closing when a request goes out on it (the backend's response and FIN
 * came in one read, the FIN not handled yet). A request whose bytes were all in hand when it was
 * routed onto a reused link, with an idempotent method, keeps a copy of them (`Resend`): if the
 * link fails before any response byte, the driver sends it once on a new connection (HAProxy's
 * retry-on empty-response, conn-failure); any other request is answered 502.
 *
 * Not to be confused with the upstream pipeline's retries (src/upstream/attempts.ts), which
 * happen while nothing was sent: here the request was sent, on a link that turned out dead.
 */
import type { Candidates, Request } from '../../src/contracts/types.ts';
import type { LinkBreak } from './upstream-link.ts';

/** Methods a request may be sent again for (RFC 9110 §9.2.2 idempotent methods). */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']);

/** A request sent on a reused link, kept whole so that it can go once more on a new connection. */
export interface Resend {
  readonly bytes: Buffer;
  readonly request: Request;
  readonly candidates: Candidates;
}

/**
 * The copy to keep of a request routed onto a reused link: its bytes [0, length) of `view` when
 * they were all in hand (`bodyDone`) and `method` is idempotent; else undefined. A copy: `view`
 * may be a read buffer reused once framed.
 */
export function resendFor(
  method: string,
  bodyDone: boolean,
  view: Buffer,
  length: number,
  request: Request,
  candidates: Candidates,
): Resend | undefined {
  if (!bodyDone || !IDEMPOTENT.has(method)) return undefined;
  return { bytes: Buffer.from(view.subarray(0, length)), request, candidates };
}

/** True when a link that broke with `why` after the whole request went out may be resent on. */
export function resendsAfter(why: LinkBreak): boolean {
  return why === 'upstream_closed' || why === 'upstream_error';
}
