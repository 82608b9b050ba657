/**
 * The shared sub-cluster step (BFE's GSLB, reference bfe.md §5), used by every operator.
 *
 * 1. Per Candidates object (cached in a WeakMap, never per request) a plan is built: the
 *    positive-weight sub-clusters sorted by name with their total weight, the cross-retry pool
 *    (weight ≥ 0, never GSLB_BLACKHOLE) and the attempt budget 1 + retries + crossRetries.
 * 2. The hash key comes from the cluster's hash strategy: client-ip (4 bytes for IPv4, 16 for
 *    IPv6, see `ipHashBytes`), a header, a cookie or the raw request-target (UTF-8 bytes).
 * 3. The primary sub-cluster is `murmur3_h1(key) % totalWeight`, walked over the positive
 *    weights in name order; an empty key draws a weighted-random one instead. Later attempts
 *    stay in the sub-cluster of the first attempt (`attempt.subclusters[0]`).
 * 4. Landing on GSLB_BLACKHOLE refuses with `blackhole`.
 * 5. Attempts 1 … 1 + retries ask the operator's picker inside the primary; the rest go to a
 *    uniformly random other sub-cluster (weight-0 ones are failover pools). Each attempt skips
 *    backends that already failed while a fresh one exists anywhere allowed, and repeats a
 *    failed one only when none is left.
 */
import { ipHashBytes } from '../base/ip.ts';
import { mod64, murmur3First64 } from '../base/murmur3.ts';
import { type Random, randomInt } from '../base/random.ts';
import {
  type Attempt,
  BLACKHOLE,
  type Candidates,
  type ClusterPolicy,
  type Jack,
  type Refusal,
  type Request,
  type SubCluster,
} from '../contracts/types.ts';

/** What an operator plugs into `balance`: its algorithm inside one sub-cluster. */
export interface BackendPicker {
  /** A jack for an up backend of `sub` not in `exclude`, or undefined when there is none. */
  pick(sub: SubCluster, request: Request, candidates: Candidates, exclude: ReadonlySet<string>): Jack | undefined;
}

/** The refusal when no backend can take the request. */
export const NO_BACKEND: Refusal = Object.freeze({ refused: 'no_backend' });
/** The refusal when GSLB sends the request to GSLB_BLACKHOLE. */
export const BLACKHOLED: Refusal = Object.freeze({ refused: 'blackhole' });

const NONE: ReadonlySet<string> = new Set();
const MAX_ATTEMPTS = 20;

/** The per-Candidates precomputation. */
interface Plan {
  /** Positive-weight sub-clusters in name order. */
  readonly shared: readonly SubCluster[];
  readonly totalWeight: number;
  /** Cross-retry pool: weight ≥ 0, not the blackhole, in name order. */
  readonly cross: readonly SubCluster[];
  readonly byName: ReadonlyMap<string, SubCluster>;
  readonly retries: number;
  readonly crossRetries: number;
  readonly maxAttempts: number;
}

const plans = new WeakMap<Candidates, Plan>();

function byName(a: SubCluster, b: SubCluster): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function planOf(candidates: Candidates): Plan {
  let plan = plans.get(candidates);
  if (plan !== undefined) return plan;
  const sorted = [...candidates.subclusters].sort(byName);
  const shared = sorted.filter((s) => s.weight > 0);
  const p = candidates.policy;
  plan = {
    shared,
    totalWeight: shared.reduce((t, s) => t + s.weight, 0),
    cross: sorted.filter((s) => s.weight >= 0 && s.name !== BLACKHOLE),
    byName: new Map(sorted.map((s) => [s.name, s])),
    retries: p.retries,
    crossRetries: p.crossRetries,
    maxAttempts: Math.min(MAX_ATTEMPTS, 1 + p.retries + p.crossRetries),
  };
  plans.set(candidates, plan);
  return plan;
}

/** The bytes the cluster's hash strategy keys on; undefined when the request has no such value. */
export function hashKey(request: Request, hash: ClusterPolicy['hash']): Uint8Array | undefined {
  let text: string | undefined;
  switch (hash.strategy) {
    case 'client-ip':
      return request.clientIp === '' ? undefined : ipHashBytes(request.clientIp);
    case 'header':
      text = request.header(hash.key);
      break;
    case 'cookie':
      text = request.cookie(hash.key);
      break;
    case 'uri':
      text = request.target;
      break;
  }
  return text === undefined || text === '' ? undefined : Buffer.from(text, 'utf8');
}

/** `murmur3_h1(key) mod n` (BFE `GetHash`); a random bucket when the key is missing or empty. */
export function hashBucket(key: Uint8Array | undefined, n: number, random: Random): number {
  if (key === undefined || key.length === 0) return randomInt(random, n);
  const [hi, lo] = murmur3First64(key);
  if (Number.isInteger(n) && n < 2 ** 31) return mod64(hi, lo, n);
  // Fractional weights: scale the top 32 bits instead (still deterministic per key).
  return Math.floor((hi / 4294967296) * n);
}

/** Walks `subs` subtracting weights until `w` drops below zero. */
function walk(subs: readonly SubCluster[], w: number): SubCluster {
  for (const s of subs) {
    w -= s.weight;
    if (w < 0) return s;
  }
  return subs[subs.length - 1]!;
}

function primaryOf(plan: Plan, request: Request, candidates: Candidates, attempt: Attempt, random: Random): SubCluster {
  const first = attempt.subclusters[0];
  if (first !== undefined) {
    const s = plan.byName.get(first);
    if (s !== undefined) return s;
  }
  if (plan.shared.length === 1) return plan.shared[0]!;
  return walk(plan.shared, hashBucket(hashKey(request, candidates.policy.hash), plan.totalWeight, random));
}

/**
 * The sub-cluster this attempt belongs to: the hashed primary for attempts 1 … 1 + retries,
 * else a random other cross-retry sub-cluster (the primary when there is none).
 */
export function chooseSubcluster(
  request: Request,
  candidates: Candidates,
  attempt: Attempt,
  random: Random,
): SubCluster | Refusal {
  const plan = planOf(candidates);
  if (plan.shared.length === 0) return NO_BACKEND;
  const primary = primaryOf(plan, request, candidates, attempt, random);
  if (primary.name === BLACKHOLE) return BLACKHOLED;
  if (attempt.number <= 1 + plan.retries) return primary;
  const p = plan.cross.indexOf(primary);
  const n = plan.cross.length - (p >= 0 ? 1 : 0);
  if (n === 0) return primary;
  const m = randomInt(random, n);
  return plan.cross[p >= 0 && m >= p ? m + 1 : m]!;
}

/** Asks `picker` in the other cross-retry sub-clusters, from a random one onwards. */
function crossPick(
  plan: Plan,
  picker: BackendPicker,
  primary: SubCluster,
  request: Request,
  candidates: Candidates,
  exclude: ReadonlySet<string>,
  random: Random,
): Jack | undefined {
  const p = plan.cross.indexOf(primary);
  const n = plan.cross.length - (p >= 0 ? 1 : 0);
  if (n === 0) return undefined;
  const start = randomInt(random, n);
  for (let k = 0; k < n; k++) {
    const m = (start + k) % n;
    const jack = picker.pick(plan.cross[p >= 0 && m >= p ? m + 1 : m]!, request, candidates, exclude);
    if (jack !== undefined) return jack;
  }
  return undefined;
}

/** One attempt's pick with exclusions `exclude`, phase order as in step 5 of the header. */
function attemptPick(
  plan: Plan,
  picker: BackendPicker,
  primary: SubCluster,
  inPrimary: boolean,
  request: Request,
  candidates: Candidates,
  exclude: ReadonlySet<string>,
  random: Random,
): Jack | undefined {
  if (inPrimary) {
    const jack = picker.pick(primary, request, candidates, exclude);
    if (jack !== undefined || plan.crossRetries === 0) return jack;
    return crossPick(plan, picker, primary, request, candidates, exclude, random);
  }
  return (
    crossPick(plan, picker, primary, request, candidates, exclude, random) ??
    picker.pick(primary, request, candidates, exclude)
  );
}

/** The whole GSLB + SLB step for one attempt: every operator's `findJack` is this with its picker. */
export function balance(
  picker: BackendPicker,
  request: Request,
  candidates: Candidates,
  attempt: Attempt,
  random: Random,
): Jack | Refusal {
  const plan = planOf(candidates);
  if (plan.shared.length === 0 || attempt.number > plan.maxAttempts) return NO_BACKEND;
  const primary = primaryOf(plan, request, candidates, attempt, random);
  if (primary.name === BLACKHOLE) return BLACKHOLED;
  const inPrimary = attempt.number <= 1 + plan.retries;
  const fresh = attemptPick(plan, picker, primary, inPrimary, request, candidates, attempt.failed, random);
  if (fresh !== undefined) return fresh;
  if (attempt.failed.size === 0) return NO_BACKEND;
  return attemptPick(plan, picker, primary, inPrimary, request, candidates, NONE, random) ?? NO_BACKEND;
}
