/**
 * Choosing and connecting a backend for one request, within the cluster's retry budget:
 *
 *   findJack(attempt 1) ──connect──► ok → Upstream
 *        ▲                  │ failed: report to the registry, add to attempt.failed
 *        └── attempt n+1 ◄──┘ while n < 1 + retries + crossRetries; then 502 (504 if the last timed out)
 *
 * Retries reuse the same candidates: one request sees one snapshot of the address book.
 */
import type { Socket } from 'node:net';
import type { BackendRegistry } from './backend-registry.ts';
import { ConnectError, connectBackend } from './connect.ts';
import { channels } from './diagnostics.ts';
import type { ResultCode } from './errors.ts';
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

/** Picks and connects a backend for `request`, retrying per the cluster policy. */
export async function openUpstream(
  request: Request,
  candidates: Candidates,
  operator: Operator,
  registry: BackendRegistry,
  connectTimeout: number,
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
      const socket = await connectBackend(backend.host, backend.port, connectTimeout);
      const latencyMs = performance.now() - started;
      registry.connected(backend.id, latencyMs);
      if (channels.upstreamConnect.hasSubscribers) {
        channels.upstreamConnect.publish({ backend, attempt: number, ok: true, latencyMs });
      }
      return { socket, jack: pick, attempts: number };
    } catch (e) {
      if (!(e instanceof ConnectError)) throw e;
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
