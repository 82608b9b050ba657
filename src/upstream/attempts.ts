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
 * someone subscribes (the debug log, app/runtime/route-debug.ts): one property read otherwise.
 *
 * The loop owns attempt numbering and the attempt-1 object (`FIRST_ATTEMPT`). A panel that must
 * see the first pick before anything opens (is a current or pooled connection to that backend
 * there already?) makes it with `pickFirst` and hands it in as `first`: the loop then asks
 * `findJack` only for retries, so round-robin and the like advance once per attempt.
 */

import { channels } from '../base/diagnostics.ts';
import type { ResultCode } from '../base/errors.ts';
import {
  type Attempt,
  type Candidates,
  isRefusal,
  type Jack,
  type Operator,
  type Refusal,
  type Request,
} from '../contracts/types.ts';
import { ConnectError } from './connect.ts';

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

/** True when an upstream outcome (or a PROXY-out header, proxy-out.ts) is a failure rather than a value. */
export function isUpstreamFailure<T extends object>(x: T | UpstreamFailure | undefined): x is UpstreamFailure {
  return x !== undefined && !Buffer.isBuffer(x) && 'result' in x;
}

/**
 * Opens `T` on the chosen jack; rejects with ConnectError when nothing was sent to the backend
 * (any other rejection is a bug and propagates).
 */
export type OpenOn<T> = (jack: Jack, attempt: number) => Promise<T>;

/** `OpenOn` with a callback: `done` runs once, with a ConnectError or the value. */
export type OpenThen<T> = (jack: Jack, attempt: number, done: (err: unknown, value: T | undefined) => void) => void;

/** The first attempt of every request: nothing failed yet (frozen, shared). */
export const FIRST_ATTEMPT: Attempt = Object.freeze({
  number: 1,
  failed: Object.freeze(new Set<string>()) as ReadonlySet<string>,
  subclusters: Object.freeze([]) as readonly string[],
});

/**
 * The first pick for `request` (attempt 1), for a caller that must see it before the loop runs;
 * handed to `tryJacks` / `tryJacksThen` as `first`. Throws what `findJack` throws.
 */
export function pickFirst(request: Request, candidates: Candidates, operator: Operator): Jack | Refusal {
  return operator.findJack(request, candidates, FIRST_ATTEMPT);
}

/**
 * Runs the findJack loop for `request` within the cluster's retry budget; `first`: attempt 1's
 * pick when the caller made it already (`pickFirst`).
 */
export function tryJacks<T>(
  request: Request,
  candidates: Candidates,
  operator: Operator,
  open: OpenOn<T>,
  first?: Jack | Refusal,
): Promise<Opened<T> | UpstreamFailure> {
  return new Promise((resolve, reject) =>
    tryJacksThen<T>(
      request,
      candidates,
      operator,
      (jack, attempt, done) => {
        let opening: Promise<T>;
        try {
          opening = open(jack, attempt);
        } catch (e) {
          done(e, undefined); // as a rejection: a ConnectError thrown at once is that attempt's failure
          return;
        }
        opening.then(
          (v) => done(undefined, v),
          (e: unknown) => done(e, undefined),
        );
      },
      (err, outcome) => (err === undefined ? resolve(outcome!) : reject(err)),
      first,
    ),
  );
}

/**
 * `tryJacks` with callbacks (the per-connection hot path: no promise, no async frame). `done`
 * runs once: with the outcome, or with an error that is not a ConnectError (a bug: an opener's,
 * or what `findJack` threw). `first`: attempt 1's pick when the caller made it already.
 */
export function tryJacksThen<T>(
  request: Request,
  candidates: Candidates,
  operator: Operator,
  open: OpenThen<T>,
  done: (err: unknown, outcome: Opened<T> | UpstreamFailure | undefined) => void,
  first?: Jack | Refusal,
): void {
  const budget = 1 + candidates.policy.retries + candidates.policy.crossRetries;
  // Made on the first failure: most connections never retry (FIRST_ATTEMPT is shared).
  let failed: Set<string> | undefined;
  let subclusters: string[] | undefined;
  let lastTimeout = false;
  let reason = '';
  let tried = 0;
  const next = (number: number): void => {
    if (number > budget) {
      done(undefined, { result: lastTimeout ? 'connect_timeout' : 'connect_failed', attempts: tried, reason });
      return;
    }
    const attempt: Attempt =
      failed === undefined || subclusters === undefined ? FIRST_ATTEMPT : { number, failed, subclusters };
    // Plugin code: a throw is a bug, reported through `done` like an opener's. A retry's pick runs
    // inside the failed connect's callback, where a throw would end the process (issue 17).
    let pick: Jack | Refusal;
    if (number === 1 && first !== undefined) pick = first;
    else {
      try {
        pick = operator.findJack(request, candidates, attempt);
      } catch (e) {
        done(e, undefined);
        return;
      }
    }
    if (isRefusal(pick)) {
      if (channels.upstreamAttempt.hasSubscribers) {
        channels.upstreamAttempt.publish({ request, candidates, attempt: number, result: pick.refused });
      }
      if (number === 1)
        done(undefined, { result: pick.refused, attempts: 0, reason: `operator refused: ${pick.refused}` });
      else done(undefined, { result: lastTimeout ? 'connect_timeout' : 'connect_failed', attempts: tried, reason });
      return;
    }
    tried = number;
    // An opener's synchronous throw is a bug, reported through `done` like its callback's errors:
    // a retry's opener runs inside the failed connect's callback, where a throw would end the
    // process. 0: the opener is running, 1: it called back, 2: it threw first (a later callback
    // is ignored, so `done` runs once).
    let state = 0;
    try {
      open(pick, number, (e, value) => {
        if (state === 2) return;
        state = 1;
        opened(pick, number, e, value);
      });
    } catch (e) {
      if (state === 1) throw e; // called back, then threw: the outcome is out already; thrown as before
      state = 2;
      done(e, undefined);
    }
  };
  const opened = (pick: Jack, number: number, e: unknown, value: T | undefined): void => {
    if (e === undefined) {
      if (channels.upstreamAttempt.hasSubscribers) publishTry(request, candidates, pick, number, 'ok');
      done(undefined, { value: value as T, jack: pick, attempts: number });
      return;
    }
    if (!(e instanceof ConnectError)) {
      done(e, undefined);
      return;
    }
    if (channels.upstreamAttempt.hasSubscribers) {
      const result = e.exhausted ? 'overloaded' : e.timeout ? 'connect_timeout' : 'connect_failed';
      publishTry(request, candidates, pick, number, result, e.message);
    }
    // Our own descriptor shortage: not the backend's fault (dial.ts left its health alone).
    if (e.exhausted) {
      done(undefined, { result: 'overloaded', attempts: number, reason: e.message });
      return;
    }
    failed ??= new Set<string>();
    failed.add(pick.backend.id);
    subclusters ??= [];
    subclusters.push(pick.subcluster);
    lastTimeout = e.timeout;
    reason = e.message;
    next(number + 1);
  };
  next(1);
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
