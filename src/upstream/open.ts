/**
 * The splicing panels' upstream: one new socket per client connection (per-connection routing)
 * or per upstream link (per-request routing), through `tryJacks` and `dial`.
 *
 * The socket comes back connected, with the cluster's PROXY header already written (before any
 * TLS byte) and upstream TLS done when the cluster has a `tls:` key; half-closes are kept, so
 * the splice forwards each direction's FIN on its own. The registry hears `closed` when the
 * socket closes: callers never report it.
 */
import type { Socket } from 'node:net';
import type { Candidates, Jack, Operator, Refusal, Request } from '../contracts/types.ts';
import type { Engine } from '../panel/contract.ts';
import { isUpstreamFailure, tryJacksThen, type UpstreamFailure } from './attempts.ts';
import { dialThen, type UpstreamHost } from './dial.ts';
import { judgesByResponse } from './outlier-judge.ts';
import { proxyHeaderFor } from './proxy-out.ts';
import { tlsOptions } from './tls-options.ts';

export type { UpstreamFailure } from './attempts.ts';

/** A connected upstream socket and the jack it was opened on. */
export interface Upstream {
  readonly socket: Socket;
  readonly jack: Jack;
  readonly attempts: number;
}

/**
 * Picks and connects a backend for `request`, retrying per the cluster policy; `engine` gives
 * the connect timeout and the upstream TLS contexts, `host` the registry. `use`: `splice`
 * (per-connection routing) or `frames` (per-request routing: the caller reads and reports every
 * response status, so a cluster's `outlierStatus` judges the backend by responses rather than by
 * connects). Either reader takes each read as it comes, so a plain TCP upstream reads into
 * reused buffers (src/data-path/own-reads.ts). `first`: attempt 1's pick when the caller made it
 * already (`pickFirst`, attempts.ts). Callbacks, no
 * promise (issue 18: from accept to the first write without an async frame): `done` runs once,
 * with the outcome or with a bug (not a ConnectError).
 */
export function openUpstreamThen(
  request: Request,
  candidates: Candidates,
  operator: Operator,
  host: UpstreamHost,
  engine: Pick<Engine, 'limits' | 'tls'>,
  use: 'splice' | 'frames',
  done: (err: unknown, outcome: Upstream | UpstreamFailure | undefined) => void,
  first?: Jack | Refusal,
): void {
  const { policy } = candidates;
  const proxyHeader = proxyHeaderFor(policy.proxyProtocol, request);
  // A value of the request the header cannot carry: refused before any backend is dialled.
  if (isUpstreamFailure(proxyHeader)) {
    done(undefined, proxyHeader);
    return;
  }
  const connectTimeout = engine.limits.connectTimeout;
  const judgedByResponse = use === 'frames' && judgesByResponse(policy);
  tryJacksThen<Socket>(
    request,
    candidates,
    operator,
    (jack, attempt, opened) =>
      dialThen(
        jack.backend,
        {
          host,
          cluster: candidates.cluster,
          judgedByResponse,
          connectTimeout,
          tls: tlsOptions(engine.tls.upstream, candidates, jack.backend.host, request.protocol),
          proxyHeader,
          allowHalfOpen: true,
          ownReads: true,
        },
        attempt,
        opened,
      ),
    (err, opened) => {
      if (err !== undefined || opened === undefined) done(err, undefined);
      else if (isUpstreamFailure(opened)) done(undefined, opened);
      else done(undefined, { socket: opened.value, jack: opened.jack, attempts: opened.attempts });
    },
    first,
  );
}
