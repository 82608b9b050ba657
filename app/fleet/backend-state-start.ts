/**
 * The backend-state part of `switchboard start` (app/start.ts): the two layers over the
 * runtime's registry (backend-state.ts), re-applied after every snapshot swap; with `fleet:`,
 * the fleet records read before the panel serves (backend-state-preload.ts) and, once the fleet
 * runs, the watch and the fleet-scoped writes (backend-state-sync.ts). Those two modules, and
 * etcd3 with them, are loaded only when `fleet:` is configured.
 */
import { hostname } from 'node:os';
import type { Logger } from '../../src/base/log.ts';
import type { BackendRegistry } from '../../src/contracts/backend-registry.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';
import { BackendStates } from './backend-state.ts';
import type { Fleet } from './contract.ts';

/** What this part reads of the runtime. */
export interface BackendStatesHost {
  readonly registry: BackendRegistry;
  readonly logger: Logger;
  onSnapshot(listener: () => void): () => void;
}

/** Where the started pieces are recorded for close (app/started-parts.ts `StartedParts`). */
export interface PartsLike {
  add(name: string, close: () => unknown): void;
}

/** The started part: the layers, and the step that joins them to the fleet once it runs. */
export interface BackendStatesPart {
  readonly states: BackendStates;
  /** Watches the fleet's records and takes fleet-scoped writes (no-op without a fleet). */
  attach(fleet: Fleet | undefined): Promise<void>;
}

/** Call before the panel starts: the layers exist and (with `fleet:`) hold the fleet's records. */
export async function startBackendStates(
  loaded: LoadedConfig,
  host: BackendStatesHost,
  parts: PartsLike,
): Promise<BackendStatesPart> {
  let fleetId: string | undefined;
  const states = new BackendStates(host.registry, () => fleetId ?? hostname());
  parts.add(
    'backend states',
    host.onSnapshot(() => states.retained()),
  );
  if (loaded.config.fleet !== undefined) {
    const { preloadFleetBackends } = await import('./backend-state-preload.ts');
    await preloadFleetBackends(loaded, states, host.logger);
  }
  return {
    states,
    async attach(fleet) {
      if (fleet === undefined) return;
      fleetId = fleet.id;
      const { FleetBackendSync } = await import('./backend-state-sync.ts');
      const sync = await FleetBackendSync.start(fleet, states, host.logger);
      parts.add('fleet backend state', () => sync.close());
    },
  };
}
