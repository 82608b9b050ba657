/**
 * `switchboard start`: load and validate the config, build the runtime, start the panel, the
 * admin listener and the reloader, and shut down gracefully:
 *
 * 1. Start: log the effective `nofile` limit (a maxConnections that cannot fit was already a
 *    config error), bind the listeners, then the admin listener when `admin` is configured. Its
 *    port is held from before the listeners bind (port-hold.ts), so a port in use there fails
 *    the start before any listener has logged `listening`. Each part is recorded as it starts
 *    (started-parts.ts); if any step fails, what started is closed in reverse order (the panel
 *    destroyed) and the error is thrown.
 * 2. Reload: `POST /reload` and `reload()`; the config file is watched with `watch: true`
 *    (reload.ts). SIGHUP and the other signals are the process's: run-start.ts.
 * 3. `close()`: `/readyz` fails, listeners stop accepting, drainable connections close after
 *    their current response, idle ones at once, tunnels get until `limits.drainTimeout`; then
 *    everything closes, last started first (the admin listener after the panel, so `/readyz`
 *    answers while it drains).
 */

import { followsEngine } from '../src/panel/capabilities.ts';
import type { BoundPanel } from '../src/panel/contract.ts';
import { adminDescriptors, maxConnectionsFor, nofileLimit } from '../src/process/nofile.ts';
import { type AcmeManager, startAcme } from './acme/start.ts';
import { type AdminServer, startAdmin } from './admin/server.ts';
import { startBackendStates } from './fleet/backend-state-start.ts';
import type { Fleet } from './fleet/contract.ts';
import type { EtcdFleet } from './fleet/fleet.ts';
import { attachFleetLimits, fleetLimitsPart } from './fleet/limits-part.ts';
import type { FleetLimits } from './fleet/limits-store.ts';
import { fleetReloadStage } from './fleet/reload-stage.ts';
import { type ConfigOverrides, type LoadedConfig, loadConfig } from './load-config.ts';
import { registerFleetMetrics } from './metrics/fleet.ts';
import { Metrics } from './metrics/metrics.ts';
import { registerTracingMetrics } from './metrics/tracing.ts';
import { holdPort } from './port-hold.ts';
import { Reloader, type ReloadResult } from './reload.ts';
import { panelReserve, perConnection, Runtime, type RuntimeOptions } from './runtime/runtime.ts';
import { StartedParts } from './started-parts.ts';
import { startTracingPart } from './tracing/part.ts';
import { tracingReloadStage } from './tracing/reload-stage.ts';

/** A started router: the runtime, its panel, the reloader and the admin listener (if any). */
export interface Router {
  readonly runtime: Runtime;
  readonly panel: BoundPanel;
  readonly reloader: Reloader;
  /** Present when the config has an `admin` section. */
  readonly admin: AdminServer | undefined;
  /** Certificates obtained by ACME (`acme:` sections). */
  readonly acme: AcmeManager;
  /** Present when the config has a `fleet:` section (app/fleet/). */
  readonly fleet: Fleet | undefined;
  /** Reloads the config file now. */
  reload(): Promise<ReloadResult>;
  /** Graceful: stop accepting, drain within limits.drainTimeout, close. */
  close(): Promise<void>;
}

/** Start options: the runtime's, plus CLI overrides (re-applied on reload) and file watching. */
export interface StartOptions extends RuntimeOptions {
  readonly overrides?: ConfigOverrides;
  /** Reload when the config file changes (the CLI turns it on). */
  readonly watch?: boolean;
}

/** Loads `file` and starts the router it describes. */
export async function startRouter(
  file: string,
  overrides: ConfigOverrides = {},
  options: StartOptions = {},
): Promise<Router> {
  const loaded = await loadConfig(file, overrides);
  return startLoaded(loaded, { ...options, overrides });
}

/** Starts a router from an already validated config. */
export async function startLoaded(loaded: LoadedConfig, options: StartOptions = {}): Promise<Router> {
  // The scope: fleet counters (app/fleet/limits-part.ts) before the first compile, with fleet.redis only.
  const limits = await fleetLimitsPart(loaded, options.logger);
  const runtime = await Runtime.create(
    loaded,
    limits === undefined ? options : { ...options, fleetCounters: () => limits.store() },
  ).catch(async (e: unknown) => {
    await limits?.close();
    throw e;
  });
  // Each part is recorded as it starts; a failure anywhere closes what started, last first.
  const parts = new StartedParts(runtime.logger);
  if (limits !== undefined) parts.add('fleet limits', () => limits.close());
  parts.add('runtime', () => runtime.close());
  try {
    const router = await startParts(loaded, runtime, parts, { ...options, limits });
    parts.add('readiness', () => router.unready());
    let closing: Promise<void> | undefined;
    return {
      runtime,
      panel: router.panel,
      reloader: router.reloader,
      admin: router.admin,
      acme: router.acme,
      fleet: router.fleet,
      reload: () => router.reloader.reload('call'),
      close: () => (closing ??= parts.close()),
    };
  } catch (e) {
    await parts.abort();
    throw e;
  }
}

/** What `startParts` started, and the switch that fails `/readyz` when shutdown begins. */
interface StartedRouter {
  readonly panel: BoundPanel;
  readonly reloader: Reloader;
  readonly admin: AdminServer | undefined;
  readonly acme: AcmeManager;
  readonly fleet: Fleet | undefined;
  unready(): void;
}

/** Starts the metrics, the panel, the ACME manager, the reloader and the admin listener on `runtime`. */
async function startParts(
  loaded: LoadedConfig,
  runtime: Runtime,
  parts: StartedParts,
  options: StartOptions & { readonly limits: FleetLimits | undefined },
): Promise<StartedRouter> {
  const factory = loaded.panel.factory;
  const panel = factory.create(runtime, loaded.panel.options);
  // Metrics subscribe before the panel starts: worker threads serve as soon as they bind, and an
  // event published before anyone listens is not counted.
  const adminConfig = loaded.config.admin;
  const metrics = adminConfig === undefined ? undefined : new Metrics(runtime, panel);
  if (metrics !== undefined) parts.add('metrics', () => metrics.close());
  // Tracing (app/tracing/) before the panel serves; OpenTelemetry is loaded only with `tracing:`.
  const tracing = await startTracingPart(loaded.config.tracing);
  if (tracing !== undefined) {
    parts.add('tracing', () => tracing.close());
    if (metrics !== undefined) registerTracingMetrics(metrics.registry, tracing.stats, panel);
  }
  // The admin listener starts last but closes after the panel: /readyz answers while it drains.
  const adminPlace = adminConfig === undefined ? undefined : parts.reserve('admin listener');
  // Backend overrides (app/fleet/backend-state.ts): with `fleet:`, the fleet's are read before serving.
  const backends = await startBackendStates(loaded, runtime, parts);
  // The admin port is held in the admin listener's place until it binds there: a clash fails
  // before any listener binds (port-hold.ts).
  const adminPort =
    adminConfig === undefined
      ? undefined
      : await holdPort('admin.address', adminConfig.address.host, adminConfig.address.port);
  if (adminPort !== undefined) adminPlace?.(adminPort);
  // Engines running elsewhere (worker threads) get every snapshot the main book swaps in, from
  // before they start: a swap while threads are still starting reaches them (their port queues it).
  if (followsEngine(panel))
    parts.add(
      'engine follower',
      runtime.onSnapshot((book) => panel.snapshotChanged(book)),
    );
  await panel.start();
  parts.add(
    'panel',
    () => panel.close(),
    () => panel.destroy(),
  );
  // The fleet (app/fleet/) once the listeners are bound (its default id and member key name them);
  // its module, and etcd3 with it, is loaded only when `fleet:` is configured.
  const fleet = await startFleetPart(loaded, runtime, panel, parts);
  await backends.attach(fleet);
  if (fleet !== undefined && metrics !== undefined) registerFleetMetrics(metrics.registry, fleet);
  attachFleetLimits(options.limits, fleet, runtime.logger, metrics?.registry);
  // ACME (app/acme/): one manager on the main thread; it follows reloads and routing-table changes.
  const acme = startAcme(runtime, panel, fleet);
  parts.add('acme', () => acme.close());
  const reloader = new Reloader(runtime, panel, options.overrides ?? {});
  parts.add('reloader', () => reloader.close());
  reloader.addStage(fleetReloadStage(fleet));
  reloader.addStage(tracingReloadStage);
  let ready = true;
  let admin: AdminServer | undefined;
  if (adminConfig !== undefined && metrics !== undefined) {
    await adminPort?.();
    admin = await startAdmin(adminConfig, {
      runtime,
      metrics,
      reloader,
      ready: () => ready,
      acme: acme.manager,
      fleet,
      backendStates: backends.states,
    });
    const started = admin;
    adminPlace?.(() => started.close());
    // token, open and allowedHosts are read per request; a new address rebinds (app/admin/server.ts).
    reloader.addStage(async (next, current) => {
      const to = next.config.admin?.address;
      const from = current.config.admin?.address;
      if (to === undefined || next.config.admin === undefined) return undefined;
      // Unchanged: the same as configured, or as bound (port 0 written back as the port it got).
      const bound = started.address();
      const sameHost = to.host === from?.host || to.host === bound.host;
      if (sameHost && (to.port === from?.port || to.port === bound.port)) return undefined;
      return started.rebind(next.config.admin);
    });
  }
  if (options.watch === true) reloader.watch();
  logStarted(loaded, runtime, admin);
  return {
    panel,
    reloader,
    admin,
    acme: acme.manager,
    fleet,
    unready: () => {
      ready = false;
    },
  };
}

/** Starts the fleet when `fleet:` is configured; it closes (its member key revoked) before the panel drains. */
async function startFleetPart(
  loaded: LoadedConfig,
  runtime: Runtime,
  panel: BoundPanel,
  parts: StartedParts,
): Promise<EtcdFleet | undefined> {
  if (loaded.config.fleet === undefined) return undefined;
  const { startFleet } = await import('./fleet/start.ts');
  const fleet = await startFleet({
    loaded,
    logger: runtime.logger,
    engineVersion: () => runtime.engine.version,
    addresses: () => panel.addresses(),
  });
  parts.add('fleet', () => fleet.close());
  return fleet;
}

/** The `switchboard started` line: version, panel, descriptor budget, admin address. */
function logStarted(loaded: LoadedConfig, runtime: Runtime, admin: AdminServer | undefined): void {
  const nofile = nofileLimit();
  runtime.logger.info(
    {
      version: runtime.engine.version,
      panel: loaded.panel.factory.name,
      config: loaded.file,
      nofile: nofile ?? 'unknown',
      maxConnections: loaded.config.limits.maxConnections,
      ...(nofile !== undefined
        ? {
            maxConnectionsFit: maxConnectionsFor(
              nofile,
              perConnection(loaded),
              adminDescriptors(loaded.config) + panelReserve(loaded),
            ),
          }
        : {}),
      ...(admin !== undefined
        ? {
            admin: `${admin.address().host}:${admin.address().port}`,
            adminMaxConnections: adminDescriptors(loaded.config),
          }
        : {}),
    },
    'switchboard started',
  );
}
