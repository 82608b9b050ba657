/**
 * Wiring the ACME manager into a started router: its sink publishes every certificate and
 * challenge into the runtime's IssuedCertificates and, when the panel serves on other threads,
 * to each of them (acknowledged); it is configured now and again after every engine swap or
 * routing-table change. With a fleet (`fleet:`), its ACME state lives in etcd (fleet-acme.ts):
 * the fleet's encryption key is read here, and a config with `acme:` sections and no key is
 * refused at start as `switchboard check` refuses it (check.ts).
 */
import { SwitchboardError } from '../../src/base/errors.ts';
import { forwardsIssued } from '../../src/panel/capabilities.ts';
import type { BoundPanel } from '../../src/panel/contract.ts';
import type { IssuedUpdate } from '../../src/tls/issued.ts';
import type { Fleet } from '../fleet/contract.ts';
import type { Runtime } from '../runtime/runtime.ts';
import { missingFleetKey } from './check.ts';
import { FleetAcme } from './fleet-acme.ts';
import { KeySealer, loadEncryptionKey } from './fleet-crypto.ts';
import { AcmeManager } from './manager.ts';

export type { AcmeManager } from './manager.ts';

/**
 * Starts the router's ACME manager; `close()` stops it and its subscription. `fleet`: the
 * running fleet (`fleet:` configured), whose etcd then holds the ACME state.
 */
export function startAcme(runtime: Runtime, panel: BoundPanel, fleet?: Fleet): { manager: AcmeManager; close(): void } {
  const sink = async (u: IssuedUpdate): Promise<void> => {
    runtime.issued.apply(u);
    if (forwardsIssued(panel)) await panel.forwardIssued(u);
  };
  const manager = new AcmeManager(sink, runtime.logger, fleetAcme(runtime, sink, fleet));
  manager.configure(runtime.engine);
  const unsubscribe = runtime.onSnapshot(() => manager.configure(runtime.engine));
  return {
    manager,
    close() {
      unsubscribe();
      manager.close();
    },
  };
}

/** The fleet side of ACME, when the router runs in a fleet. */
function fleetAcme(
  runtime: Runtime,
  sink: (u: IssuedUpdate) => Promise<void>,
  fleet: Fleet | undefined,
): FleetAcme | undefined {
  const { config, dir } = runtime.engine.loaded;
  if (fleet === undefined || config.fleet === undefined) return undefined;
  const missing = missingFleetKey(config);
  if (missing !== undefined) throw new SwitchboardError('SWB_ERR_CONFIG', missing);
  const key = loadEncryptionKey(config.fleet, dir);
  return new FleetAcme({
    fleet,
    prefix: config.fleet.etcd.prefix,
    sealer: key === undefined ? undefined : new KeySealer(key),
    lockTtl: config.fleet.leaseTtl,
    sink,
    logger: runtime.logger,
  });
}
