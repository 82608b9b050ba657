/**
 * The fleet's reload stage (app/reload.ts `addStage`), loaded whether or not `fleet:` is set and
 * importing no etcd code: the `fleet:` section cannot change on reload (adding, removing or
 * editing it needs a restart: a new id or etcd would make another member); any other change
 * rewrites the member key after the swap, with the new config hash and listeners.
 */
import { SwitchboardError } from '../../src/base/errors.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';
import type { StagedChange } from '../runtime/reload-result.ts';

/** What the stage asks of a running fleet. */
export interface RewritesMember {
  rewriteMember(): Promise<void>;
}

/** The stage for a router whose fleet is `fleet` (undefined: no `fleet:` section). */
export function fleetReloadStage(
  fleet: RewritesMember | undefined,
): (next: LoadedConfig, current: LoadedConfig) => Promise<StagedChange | undefined> {
  return async (next, current) => {
    if (JSON.stringify(next.config.fleet) !== JSON.stringify(current.config.fleet)) {
      const what =
        current.config.fleet === undefined ? 'adding' : next.config.fleet === undefined ? 'removing' : 'changing';
      throw new SwitchboardError('SWB_ERR_CONFIG', `fleet: ${what} the fleet section needs a restart`);
    }
    if (fleet === undefined) return undefined;
    return { commit: () => void fleet.rewriteMember(), abort: () => undefined };
  };
}
