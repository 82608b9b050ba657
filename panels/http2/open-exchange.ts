/**
 * A stream's way to its backend, on the core's upstream pipeline (src/upstream/): the findJack
 * loop with the cluster's retries (`tryJacks`), and on each attempt an exchange on a pooled
 * connection of the chosen backend; new connections are made by `dial` with this plan:
 *
 *   cluster protocol   transport towards the backend
 *   http1              TCP, or TLS (ALPN http/1.1) when the cluster has `tls:`
 *   h2c                TCP, or TLS (ALPN h2) when the cluster has `tls:`
 *   h2                 TLS (ALPN h2) with the cluster's `tls:` (default: system roots, verified)
 *
 * Every new connection starts with the cluster's outbound PROXY header; the pool key then
 * includes the client, so such connections serve only that client's connection and close with
 * it (`client`, private-keys.ts).
 */
import type { Socket } from 'node:net';
import { type Candidates, isRefusal, type Jack, type Refusal } from '../../src/contracts/types.ts';
import type { Engine, PanelRuntime } from '../../src/panel/contract.ts';
import {
  type DialPlan,
  isUpstreamFailure,
  judgesByResponse,
  type Opened,
  pickFirst,
  poolKey,
  proxyHeaderFor,
  tlsOptions,
  tryJacks,
  type UpstreamFailure,
} from '../../src/upstream/index.ts';
import type { Exchange } from './exchange.ts';
import type { Routed } from './stream-request.ts';
import type { H1Pool } from './upstream-h1.ts';
import type { ClientWatch, H2Pool } from './upstream-h2.ts';

/** The pools and runtime an exchange is opened with. */
export interface UpstreamPools {
  readonly runtime: PanelRuntime;
  readonly h2: H2Pool;
  readonly h1: H1Pool;
}

/**
 * findJack + open within the cluster's retry budget. `length`: the client's body length, 0 for
 * none, undefined for unknown. `client`: the client connection's socket (private pools close
 * with it; its share of h2 upstream streams is counted). `watch`: whether the client stream is
 * gone, asked before an h2 stream opens after a wait.
 */
export function openExchange(
  routed: Routed,
  candidates: Candidates,
  engine: Engine,
  pools: UpstreamPools,
  length: number | undefined,
  client?: Socket,
  watch?: ClientWatch,
): Opened<Exchange> | UpstreamFailure | Promise<Opened<Exchange> | UpstreamFailure> {
  const { request, head } = routed;
  const { policy } = candidates;
  const { protocol } = policy;
  const proxyHeader = proxyHeaderFor(policy.proxyProtocol, request);
  // A value of the request the header cannot carry: refused before any backend is dialled.
  if (isUpstreamFailure(proxyHeader)) return proxyHeader;
  const { operator } = engine;
  let first: Jack | Refusal | undefined;
  // What the first attempt's immediate open threw: tryJacks gets it as that attempt's outcome.
  let early: { readonly error: unknown } | undefined;
  if (protocol !== 'http1') {
    // The first attempt on a settled h2 session needs no promise: the stream opens now. Else
    // tryJacks runs as usual, starting with this same pick (one pick per attempt, so round-robin
    // and the like advance exactly as before).
    first = pickFirst(request, candidates, operator);
    if (!isRefusal(first)) {
      const owner = policy.proxyProtocol === 'off' ? undefined : client;
      const tls = tlsOptions(engine.tls.upstream, candidates, first.backend.host, protocol, protocol === 'h2');
      const key = poolKey(first.backend.id, policy, request, tls);
      try {
        const value = pools.h2.openReady(first.backend, key, head, length === 0, owner, client);
        if (value !== undefined) return { value, jack: first, attempts: 1 };
      } catch (error) {
        early = { error };
      }
    }
  }
  const connectTimeout = engine.limits.connectTimeout;
  const judgedByResponse = judgesByResponse(policy);
  const opener = (jack: Jack, attempt: number): Promise<Exchange> => {
    if (attempt === 1 && early !== undefined) return Promise.reject(early.error);
    const { backend } = jack;
    const tls = tlsOptions(engine.tls.upstream, candidates, backend.host, protocol, protocol === 'h2');
    const plan: DialPlan = {
      host: pools.runtime,
      cluster: candidates.cluster,
      judgedByResponse,
      connectTimeout,
      tls,
      proxyHeader,
      allowHalfOpen: false,
      ...(tls !== undefined && protocol !== 'http1' ? { requireAlpn: 'h2' } : {}),
    };
    const key = poolKey(backend.id, policy, request, tls);
    const owner = policy.proxyProtocol === 'off' ? undefined : client;
    return protocol === 'http1'
      ? pools.h1.open(backend, key, plan, attempt, head, length, owner)
      : pools.h2.open(backend, key, plan, attempt, head, length === 0, {
          owner,
          client,
          watch,
          maxSessions: engine.limits.maxUpstreamSessionsPerBackend,
        });
  };
  return tryJacks(request, candidates, operator, opener, first);
}
