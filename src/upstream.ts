/**
 * Choosing and connecting a backend for one request, within the cluster's retry budget:
 *
 *   findJack(attempt 1) ──connect──► ok → Upstream
 *        ▲                  │ failed: report to the registry, add to attempt.failed
 *        └── attempt n+1 ◄──┘ while n < 1 + retries + crossRetries; then 502 (504 if the last timed out)
 *
 * Retries reuse the same candidates: one request sees one snapshot of the address book.
 * A connect that fails because this process has no file descriptor left (EMFILE/ENFILE) ends
 * the attempts with `overloaded` and is not reported against the backend.
 */
import type { Socket } from 'node:net';
import type { BackendRegistry } from './backend-registry.ts';
import { ConnectError, connectBackend } from './connect.ts';
import { channels } from './diagnostics.ts';
import type { ResultCode } from './errors.ts';
import type { UpstreamTls, UpstreamTlsOptions } from './tls/upstream.ts';
import { type Attempt, type Candidates, isRefusal, type Jack, type Operator, type Request } from './types.ts';

export interface Upstream {
  readonly socket: Socket;
  readonly jack: Jack;
  readonly attempts: number;
}

export interface UpstreamFailure {
  readonly result: ResultCode;
  readonly attempts: number;
  readonly reason: string;
}

/** The cluster's upstream TLS options; a CA that cannot be loaded fails the attempt like a refused connect. */
function tlsFor(
  tls: UpstreamTls | undefined,
  request: Request,
  candidates: Candidates,
  host: string,
): UpstreamTlsOptions | undefined {
  if (tls === undefined || candidates.policy.tls === undefined) return undefined;
  try {
    return tls.optionsFor(candidates.policy, host, request.protocol);
  } catch (e) {
    throw new ConnectError(`cluster ${candidates.cluster}: ${(e as Error).message}`, false);
  }
}

/**
 * Picks and connects a backend for `request`, retrying per the cluster policy; over TLS when
 * the cluster has a `tls:` key and `tls` (the engine's UpstreamTls) is given.
 */
export async function openUpstream(
  request: Request,
  candidates: Candidates,
  operator: Operator,
  registry: BackendRegistry,
  connectTimeout: number,
  tls?: UpstreamTls,
): Promise<Upstream | UpstreamFailure> {
  const budget = 1 + candidates.policy.retries + candidates.policy.crossRetries;
  const failed = new Set<string>();
  const subclusters: string[] = [];
  let lastTimeout = false;
  let reason = '';
  let tried = 0;
  for (let number = 1; number <= budget; number++) {
    const attempt: Attempt = { number, failed, subclusters };
    const pick = operator.findJack(request, candidates, attempt);
    if (isRefusal(pick)) {
      if (number === 1) return { result: pick.refused, attempts: 0, reason: `operator refused: ${pick.refused}` };
      break;
    }
    const { backend } = pick;
    tried = number;
    const started = performance.now();
    try {
      const socket = await connectBackend(
        backend.host,
        backend.port,
        connectTimeout,
        tlsFor(tls, request, candidates, backend.host),
      );
      const latencyMs = performance.now() - started;
      registry.connected(backend.id, latencyMs);
      if (channels.upstreamConnect.hasSubscribers) {
        channels.upstreamConnect.publish({ backend, attempt: number, ok: true, latencyMs });
      }
      return { socket, jack: pick, attempts: number };
    } catch (e) {
      if (!(e instanceof ConnectError)) throw e;
      if (e.exhausted) {
        // Our own descriptor shortage: not the backend's fault, and every retry would fail the
        // same way. Answer 503 overloaded and leave the backend's health alone.
        if (channels.upstreamConnect.hasSubscribers) {
          channels.upstreamConnect.publish({
            backend,
            attempt: number,
            ok: false,
            latencyMs: 0,
            error: e.message,
            exhausted: true,
          });
        }
        return { result: 'overloaded', attempts: number, reason: e.message };
      }
      registry.connectFailed(backend.id);
      if (channels.upstreamConnect.hasSubscribers) {
        channels.upstreamConnect.publish({
          backend,
          attempt: number,
          ok: false,
          latencyMs: performance.now() - started,
          error: e.message,
        });
      }
      failed.add(backend.id);
      subclusters.push(pick.subcluster);
      lastTimeout = e.timeout;
      reason = e.message;
    }
  }
  return { result: lastTimeout ? 'connect_timeout' : 'connect_failed', attempts: tried, reason };
}
