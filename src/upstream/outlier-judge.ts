/**
 * Passive health by response status (cluster `outlierStatus`, src/config/outlier-status.ts):
 * every panel that reads the responses of a backend judges it here, once per final response.
 *
 *   final response head (status ≥ 200) ─► matches outlierStatus? ─► registry.responseFailed
 *                                                    └─ no ───────► registry.responseSucceeded
 *
 * 1. A cluster without `outlierStatus` has no judge (`responseJudgeFor` gives undefined): its
 *    backends are judged by their connects alone (src/upstream/dial.ts), and nothing is read.
 * 2. Interim heads (1xx) are not judged; the response is forwarded whatever the verdict.
 */
import { type OutlierStatus, outlierStatusFor } from '../config/outlier-status.ts';
import type { BackendRegistry } from '../contracts/backend-registry.ts';
import type { Candidates, ClusterPolicy } from '../contracts/types.ts';

/** True when the cluster judges its backends by response status (a dial then counts no success). */
export function judgesByResponse(policy: ClusterPolicy): boolean {
  return (policy.outlierStatus ?? '') !== '';
}

/** The judge of one backend of one cluster: reports each final response status to the registry. */
export class ResponseJudge {
  readonly #outlier: OutlierStatus;
  readonly #registry: BackendRegistry;
  readonly #backendId: string;
  readonly #cluster: string;

  constructor(outlier: OutlierStatus, registry: BackendRegistry, backendId: string, cluster: string) {
    this.#outlier = outlier;
    this.#registry = registry;
    this.#backendId = backendId;
    this.#cluster = cluster;
  }

  /** A response head with `status` came from the backend (interim heads are ignored). */
  judge(status: number): void {
    if (status < 200) return;
    if (this.#outlier.matches(status)) this.#registry.responseFailed(this.#backendId, this.#cluster);
    else this.#registry.responseSucceeded(this.#backendId, this.#cluster);
  }
}

/** The judge of `backendId` under the routed cluster, or undefined when the cluster has no `outlierStatus`. */
export function responseJudgeFor(
  candidates: Candidates,
  backendId: string,
  registry: BackendRegistry,
): ResponseJudge | undefined {
  const outlier = outlierStatusFor(candidates.policy.outlierStatus);
  return outlier === undefined ? undefined : new ResponseJudge(outlier, registry, backendId, candidates.cluster);
}
