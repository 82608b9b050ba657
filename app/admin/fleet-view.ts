/**
 * `GET /fleet`: this router's id, whether the fleet is degraded (etcd unreachable) and the live
 * members with their versions, config hashes, listeners and times, `self` marking this router.
 * Without `fleet:` the answer is `{ fleet: false }` (routes.ts answers it 404).
 */
import type { Fleet, Member } from '../fleet/contract.ts';

/** The body of `GET /fleet`. */
export interface FleetView {
  readonly id: string;
  readonly degraded: boolean;
  readonly reason?: string;
  readonly members: readonly (Member & { readonly self: boolean })[];
}

/** What `GET /fleet` answers for `fleet`. */
export function fleetView(fleet: Fleet): FleetView {
  const reason = fleet.degradedReason;
  return {
    id: fleet.id,
    degraded: fleet.degraded,
    ...(reason !== undefined ? { reason } : {}),
    members: fleet.members().map((m) => ({ ...m, self: m.id === fleet.id })),
  };
}
