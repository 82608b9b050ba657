/**
 * The fleet counters of `switchboard start` (issue 43 item 3): app/start.ts imports this module
 * with `import()` only when `fleet.redis` is configured, so a router without it loads neither
 * node-redis nor these counters. The counters exist before the fleet (the first compile needs
 * them, the fleet starts once the listeners are bound): `useFleet` gives them the live members
 * then.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { InternalError } from '../../src/base/errors.ts';
import type { Logger } from '../../src/base/log.ts';
import type { FleetConfig } from '../../src/config/fleet.ts';
import { redisTransport } from './limits-redis.ts';
import { FleetLimits } from './limits-store.ts';

/**
 * The fleet counters of `fleet` (whose `redis` must be set), syncing every `syncInterval` ms.
 * Their in-flight field is `<fleet.id or hostname>/<random>`: one per process, so a restarted
 * router never adds to the slots its previous life left (those expire with their TTL).
 */
export function startFleetLimits(fleet: FleetConfig, logger: Logger, syncInterval?: number): FleetLimits {
  const id = `${fleet.id ?? hostname()}/${randomUUID().slice(0, 8)}`;
  const redis = fleet.redis;
  if (redis === undefined) throw new InternalError('startFleetLimits without fleet.redis');
  return new FleetLimits({
    id,
    prefix: fleet.etcd.prefix,
    timeout: redis.timeout,
    ...(syncInterval === undefined ? {} : { syncInterval }),
    transport: redisTransport(redis.url, logger),
    logger,
  });
}
