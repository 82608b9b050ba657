/**
 * The fleet part of `switchboard start` (app/start.ts imports this module with `import()` only
 * when `fleet:` is configured, so a router without it loads neither etcd3 nor this folder's
 * code): the member id and the member key's facts from the started router, then
 * `EtcdFleet.start`.
 */
import { readFileSync } from 'node:fs';
import { InternalError } from '../../src/base/errors.ts';
import type { Logger } from '../../src/base/log.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';
import { EtcdFleet } from './fleet.ts';
import { listenerAddresses, memberId } from './member-id.ts';

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** What the fleet reads of the running router. */
export interface FleetHost {
  readonly loaded: LoadedConfig;
  readonly logger: Logger;
  /** The engine version in use (`<config hash>@<load time>`). */
  engineVersion(): string;
  /** The bound listeners by name, in config order. */
  addresses(): Record<string, { host: string; port: number }>;
}

/** Starts the fleet of `host.loaded.config.fleet` (which must be set); an id in use rejects. */
export async function startFleet(host: FleetHost): Promise<EtcdFleet> {
  const config = host.loaded.config.fleet;
  if (config === undefined) throw new InternalError('startFleet without fleet:');
  const id = memberId(config, Object.values(host.addresses())[0]);
  const fleet = await EtcdFleet.start({
    config,
    dir: host.loaded.dir,
    id,
    logger: host.logger,
    facts: () => ({
      version: PACKAGE_VERSION,
      configHash: host.engineVersion().split('@')[0] ?? '',
      listeners: listenerAddresses(host.addresses()),
    }),
  });
  host.logger.info(
    { id, prefix: config.etcd.prefix, members: fleet.liveCount(), degraded: fleet.degraded },
    'fleet: member',
  );
  return fleet;
}
