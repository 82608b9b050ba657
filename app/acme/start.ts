/**
 * Wiring the ACME manager into a started router: its sink publishes every certificate and
 * challenge into the runtime's IssuedCertificates and, when the panel serves on other threads,
 * to each of them (acknowledged); it is configured now and again after every engine swap or
 * routing-table change.
 */
import { forwardsIssued } from '../../src/panel/capabilities.ts';
import type { BoundPanel } from '../../src/panel/contract.ts';
import type { IssuedUpdate } from '../../src/tls/issued.ts';
import type { Runtime } from '../runtime/runtime.ts';
import { AcmeManager } from './manager.ts';

export type { AcmeManager } from './manager.ts';

/** Starts the router's ACME manager; `close()` stops it and its subscription. */
export function startAcme(runtime: Runtime, panel: BoundPanel): { manager: AcmeManager; close(): void } {
  const sink = async (u: IssuedUpdate): Promise<void> => {
    runtime.issued.apply(u);
    if (forwardsIssued(panel)) await panel.forwardIssued(u);
  };
  const manager = new AcmeManager(sink, runtime.logger);
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
