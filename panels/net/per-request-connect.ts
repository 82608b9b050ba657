/**
 * A new upstream link for a per-request connection: the upstream pipeline (findJack, connect,
 * PROXY out, TLS, the cluster's retries) with callbacks, no promise (issue 18: nothing async on
 * the accept → connect path).
 */
import { InternalError } from '../../src/base/errors.ts';
import type { Candidates, Jack, Request } from '../../src/contracts/types.ts';
import { isUpstreamFailure, openUpstreamThen, type Upstream, type UpstreamFailure } from '../../src/upstream/index.ts';
import type { PerRequestStart } from './per-request-start.ts';

/**
 * Opens a connection for `request` (starting with `first` when the route made the first pick)
 * and hands its outcome, a socket or a refusal, to `then`. One catch for the pipeline's bug
 * report and for `then`: a throw in either (a broken invariant) destroys the socket opened for
 * it and goes to `failed`; it never reaches the socket's handler.
 */
export function openLink(
  start: PerRequestStart,
  request: Request,
  candidates: Candidates,
  first: Jack | undefined,
  then: (up: Upstream | UpstreamFailure) => void,
  failed: (err: unknown) => void,
): void {
  const { engine, runtime } = start;
  openUpstreamThen(
    request,
    candidates,
    engine.operator,
    runtime,
    engine,
    'frames',
    (err, up) => {
      try {
        if (err !== undefined || up === undefined)
          throw err ?? new InternalError('openUpstream settled without an outcome');
        then(up);
      } catch (e) {
        if (up !== undefined && !isUpstreamFailure(up)) up.socket.destroy();
        failed(e);
      }
    },
    first,
  );
}
