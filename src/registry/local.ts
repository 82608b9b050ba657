/**
 * The backend registry of one process (every panel but `worker`): the shared bookkeeping of
 * `Ledger` over plain-field cells (src/registry/ledger.ts). See src/contracts/backend-registry.ts for the
 * contract.
 */
import type { BackendRegistry } from '../contracts/backend-registry.ts';
import { Ledger } from './ledger.ts';

/** A `BackendRegistry` whose records live in this thread's memory. */
export class LocalRegistry extends Ledger implements BackendRegistry {
  /** Local cells need no placing: they already live where they are read. */
  protected place(): void {}
  /** Nothing to release: a dropped cell is garbage. */
  protected freed(): void {}
}
