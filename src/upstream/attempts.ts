/**
 * The retry loop of every upstream: pick a jack, open on it, retry within the cluster budget.
 *
 *   findJack(attempt 1) ──open──► ok → Opened
 *        ▲                  │ ConnectError: add to attempt.failed / subclusters
 *        └── attempt n+1 ◄──┘ while n < 1 + retries + crossRetries; then 502 (504 if the last timed out)
 *
 * "Open" is what the panel needs on the chosen backend: a new socket (splicing panels), or a
 * pooled HTTP/1 connection / an h2 stream (http2 panel). Whatever it is, a new connection is
 * made by `dial` (dial.ts), which does the health accounting and the diagnostics; this loop
 * only decides what to try next. Retries reuse the same candidates: one request sees one
 * snapshot of the address book. A ConnectError that says the router itself is out of file
 * descriptors ends the attempts with `overloaded`: every retry would fail the same way.
 * Each try (and an operator refusal) is published on `switchboard:upstream:attempt` while
 * someone subscribes (the debug log, app/route-debug.ts): one property read otherwise.
 */
import { ConnectError } from '../connect.ts';
import { channels } from '../diagnostics.ts';
import type { ResultCode } from '../errors.ts';
import { type Attempt, type Candidates, isRefusal, type Jack, type Operator, type Request } from '../types.ts';

/** What an opener produced, with the jack it was produced on. */
export interface Opened<T> {
  readonly value: T;
  readonly jack: Jack;
  /** The attempt number that succeeded (1 = no retry). */
  readonly attempts: number;
}

/** Why no attempt succeeded: the router's answer (DESIGN's table) and a reason for the log. */
export interface UpstreamFailure {
  readonly result: ResultCode;
  readonly attempts: number;
  readonly reason: string;
}

/**
 * Opens `T` on the chosen jack; rejects with ConnectError when nothing was sent to the backend
 * (any other rejection is a bug and propagates).
 */
export type OpenOn<T> = (jack: Jack, attempt: number) => Promise<T>;

/** Runs the findJack loop for `request` within the cluster's retry budget. */
export async function tryJacks<T>(
  request: Request,
  candidates: Candidates,
  operator: Operator,
  open: OpenOn<T>,
): Promise<Opened<T> | UpstreamFailure> {
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
      if (channels.upstreamAttempt.hasSubscribers) {
        channels.upstreamAttempt.publish({ request, candidates, attempt: number, result: pick.refused });
      }
      if (number === 1) return { result: pick.refused, attempts: 0, reason: `operator refused: ${pick.refused}` };
      break;
    }
    tried = number;
    try {
      const value = await open(pick, number);
      if (channels.upstreamAttempt.hasSubscribers) publishTry(request, candidates, pick, number, 'ok');
      return { value, jack: pick, attempts: number };
    } catch (e) {
      if (!(e instanceof ConnectError)) throw e;
      if (channels.upstreamAttempt.hasSubscribers) {
        const result = e.exhausted ? 'overloaded' : e.timeout ? 'connect_timeout' : 'connect_failed';
        publishTry(request, candidates, pick, number, result, e.message);
      }
      // Our own descriptor shortage: not the backend's fault (dial.ts left its health alone).
      if (e.exhausted) return { result: 'overloaded', attempts: number, reason: e.message };
      failed.add(pick.backend.id);
      subclusters.push(pick.subcluster);
      lastTimeout = e.timeout;
      reason = e.message;
    }
  }
  return { result: lastTimeout ? 'connect_timeout' : 'connect_failed', attempts: tried, reason };
}

function publishTry(
  request: Request,
  candidates: Candidates,
  jack: Jack,
  attempt: number,
  result: string,
  error?: string,
): void {
  const { backend, subcluster } = jack;
  channels.upstreamAttempt.publish(
    error === undefined
      ? { request, candidates, attempt, result, backend, subcluster }
      : { request, candidates, attempt, result, backend, subcluster, error },
  );
}
