/**
 * The fleet counters' part of `switchboard start` (issue 43 item 3), imported by app/start.ts:
 *
 * 1. `fleetLimitsPart` before the runtime (its first compile needs the counters): with
 *    `fleet.redis`, loads limits-start.ts (and node-redis with it) and makes the counters,
 *    syncing at once with a share of 1 router; without it, nothing is loaded.
 * 2. `attachFleetLimits` once the fleet has started: the live members share each limit from
 *    then on, the runtime's logger logs, and `switchboard_fleet_limits_degraded` (1 while the
 *    counters count by the fallback) is on the metrics registry, read at scrape time.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../../src/base/log.ts';
import { createLogger } from '../../src/base/log.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';
import type { Fleet } from './contract.ts';
import type { FleetLimits } from './limits-store.ts';

/** Step 1: the counters of `loaded`'s `fleet.redis`, or undefined. */
export async function fleetLimitsPart(loaded: LoadedConfig, logger?: Logger): Promise<FleetLimits | undefined> {
  const fleet = loaded.config.fleet;
  if (fleet?.redis === undefined) return undefined;
  const { startFleetLimits } = await import('./limits-start.ts');
  const log = logger ?? createLogger(loaded.config.log.level, undefined, { format: loaded.config.log.format });
  return startFleetLimits(fleet, log);
}

/** Step 2. */
export function attachFleetLimits(
  limits: FleetLimits | undefined,
  fleet: Fleet | undefined,
  logger: Logger,
  registry: Registry | undefined,
): void {
  if (limits === undefined) return;
  if (fleet !== undefined) limits.useFleet(fleet, logger);
  if (registry === undefined) return;
  new Gauge({
    name: 'switchboard_fleet_limits_degraded',
    help: '1 while the scope: fleet limits count by their fallback (Redis out of reach or slower than fleet.redis.timeout), else 0',
    registers: [registry],
    collect() {
      this.set(limits.degraded ? 1 : 0);
    },
  });
}
