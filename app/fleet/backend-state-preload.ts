/**
 * The fleet's backend records read once before the router serves (issue 43 item 4: a router
 * restarted while a backend is drained across the fleet never sends it a request). The fleet
 * itself starts after the listeners are bound (its default id names them), so this read uses a
 * client of its own, closed at once; the watch (backend-state-sync.ts) takes over from the
 * fleet's start. Loaded only when `fleet:` is configured.
 *
 * etcd unreachable: the read fails within `fleet.etcd.dialTimeout`, a warning says so and the
 * router starts without fleet records (the watch applies them once etcd answers).
 */
import type { Logger } from '../../src/base/log.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';
import type { BackendStates } from './backend-state.ts';
import { type OverrideRecord, parse } from './backend-state-record.ts';
import { BACKENDS_PREFIX } from './backend-state-sync.ts';
import { connectFleetEtcd } from './client.ts';
import { firstLine } from './errors.ts';

/** Reads `<prefix>backends/` into `states`' fleet layer; never rejects. */
export async function preloadFleetBackends(loaded: LoadedConfig, states: BackendStates, logger: Logger): Promise<void> {
  const config = loaded.config.fleet;
  if (config === undefined) return;
  const prefix = config.etcd.prefix + BACKENDS_PREFIX;
  let client: Awaited<ReturnType<typeof connectFleetEtcd>> | undefined;
  try {
    client = await connectFleetEtcd(config.etcd, loaded.dir);
    const stored = await client.getAll().prefix(prefix).strings();
    const records = new Map<string, OverrideRecord>();
    for (const [key, value] of Object.entries(stored)) {
      const r = parse(value);
      if (r !== undefined) records.set(key.slice(prefix.length), r);
    }
    states.replaceFleet(records);
    if (records.size > 0)
      logger.info({ backends: [...records.keys()] }, 'fleet: backend overrides applied before serving');
  } catch (e) {
    logger.warn(
      { err: firstLine(e), prefix },
      'fleet: backend overrides not read before serving (etcd unreachable); applied once etcd answers',
    );
  } finally {
    client?.close();
  }
}
