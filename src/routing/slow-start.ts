/**
 * Slow start (reference bfe.md §6): a backend that just came back (health check) or was just
 * added (reload) does not take its full share at once; its weight ramps linearly from 1 % to
 * 100 % over the cluster's `slowStart`, measured from the registry's `upSince`.
 */
import type { BackendState } from '../contracts/backend-registry.ts';

/** The smallest share of its weight a ramping backend gets (BFE starts at internal weight 1 of 100). */
const FLOOR = 0.01;

/** The weight `weight` is worth now for a backend in state `state` under a ramp of `slowStartMs`. */
export function slowStartWeight(weight: number, state: BackendState, slowStartMs: number, now: number): number {
  if (slowStartMs <= 0) return weight;
  const elapsed = now - state.upSince;
  if (elapsed >= slowStartMs) return weight;
  const share = elapsed <= 0 ? FLOOR : Math.max(FLOOR, elapsed / slowStartMs);
  return weight * share;
}
