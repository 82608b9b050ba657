/**
 * The runtime: what one loaded config becomes. An `Engine` holds the address book, the operator
 * and the limits of one config version; the `Runtime` holds the engine in use plus what outlives
 * reloads (backend registry, loggers). Panels read `runtime.engine` once per connection, so a
 * connection finishes on the engine it started with.
 *
 *   LoadedConfig ──create──► book, operator ──start──► Engine ──swap──► runtime.engine
 */

import { type Admission, LocalAdmission } from '../../src/admission/admission.ts';
import {
  type AccessLog,
  configureLogger,
  createLogger,
  type Logger,
  type ReopenableAccessLog,
} from '../../src/base/log.ts';
import { defaultRandom, type Random } from '../../src/base/random.ts';
import type { BackendRegistry } from '../../src/contracts/backend-registry.ts';
import type { PluginContext } from '../../src/contracts/plugin.ts';
import type { AddressBook } from '../../src/contracts/types.ts';
import { DrainSet } from '../../src/data-path/drain.ts';
import { HealthManager } from '../../src/health/index.ts';
import { hasDescriptorBudget, isRegistryProvider, sharesPolicyCounters } from '../../src/panel/capabilities.ts';
import type { Engine, LoadedConfig, PanelRuntime } from '../../src/panel/contract.ts';
import type { CounterStore } from '../../src/policy/index.ts';
import { checkNofile, descriptorsPerConnection } from '../../src/process/nofile.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { IssuedCertificates } from '../../src/tls/issued.ts';
import { AccessLogs } from './access-log.ts';
import { BackendSync } from './backend-sync.ts';
import { buildEngine, closeEngine } from './engine-build.ts';
import { localCounting, type PolicyCounting, sharedCounting } from './engine-policies.ts';
import { ExhaustionLog } from './exhaustion-log.ts';
import { logPolicyWarnings } from './policy-warnings.ts';
import { RouteDebugLog } from './route-debug.ts';
import { RoutesLog, type RoutesState } from './routes-log.ts';

/** The most descriptors one client connection may hold on the loaded config's panel. */
export function perConnection(loaded: LoadedConfig): number {
  const f = loaded.panel.factory;
  return hasDescriptorBudget(f)
    ? f.descriptorsPerConnection(loaded.config, loaded.panel.options)
    : descriptorsPerConnection(loaded.config);
}

/** The descriptors the loaded config's panel holds beside its connections (its threads'). */
export function panelReserve(loaded: LoadedConfig): number {
  const f = loaded.panel.factory;
  return hasDescriptorBudget(f) ? (f.reservedDescriptors?.(loaded.config, loaded.panel.options) ?? 0) : 0;
}

export interface RuntimeOptions {
  readonly logger?: Logger;
  readonly accessLog?: AccessLog;
  /**
   * Apply `log.access.rules` to the injected `accessLog` too (tests). Default: an injected log
   * (a worker thread's forwarder) gets every line; the main thread judges them (access-log.ts).
   */
  readonly accessLogRules?: boolean;
  readonly random?: Random;
  readonly registry?: BackendRegistry;
  /** The connection caps (default: this thread's own counters). */
  readonly admission?: Admission;
  /** Listeners bind with SO_REUSEPORT (worker threads). */
  readonly reusePort?: boolean;
  /**
   * Where the policies' counters live (engine-policies.ts); default: this thread's own, or a
   * shared store when the panel's threads count once for the process (the worker panel).
   */
  readonly policyCounting?: PolicyCounting;
  /** The `scope: fleet` counters of each compile (app/fleet/limits-store.ts), with `fleet.redis`. */
  readonly fleetCounters?: () => CounterStore;
}

export type { Engine } from '../../src/panel/contract.ts';

export class Runtime implements PanelRuntime {
  #engine: Engine;
  readonly registry: BackendRegistry;
  readonly health: HealthManager;
  readonly logger: Logger;
  readonly random: Random;
  /** Connections that can close at a clean boundary on shutdown (src/data-path/drain.ts). */
  readonly drain = new DrainSet();
  /** The connection caps of the process (src/admission/admission.ts). */
  admission: Admission = new LocalAdmission();
  /** Listeners bind with SO_REUSEPORT (worker threads). */
  reusePort = false;
  /** ACME certificates and challenges; outlives engines (src/tls/issued.ts). */
  readonly issued: IssuedCertificates;
  /** Called after the current engine's book swapped its snapshot (`onSnapshot`). */
  readonly #snapshotListeners = new Set<(book: AddressBook) => void>();
  readonly #backends: BackendSync;
  /** The access log and its rules (access-log.ts); its counts outlive reloads. */
  readonly #accessLogs: AccessLogs;
  /** An injected logger (tests) keeps its level across reloads. */
  #injectedLogger = false;
  /** Connections still running on each retired engine; the engine closes when its count reaches 0. */
  readonly #holds = new Map<Engine, number>();
  readonly #retired = new Set<Engine>();
  readonly #exhausted: ExhaustionLog;
  /** Routing decisions at debug level (subscribed only while the level asks for them). */
  readonly #routeDebug: RouteDebugLog;
  /** `routes loaded` / `routes updated` after each applied snapshot (routes-log.ts). */
  readonly #routesLog: RoutesLog;
  /** Where each engine's policy counters come from (the previous engine's carry over). */
  #policyCounting: PolicyCounting = localCounting;

  private constructor(
    engine: Engine,
    registry: BackendRegistry,
    health: HealthManager,
    logger: Logger,
    accessLogs: AccessLogs,
    random: Random,
    issued: IssuedCertificates,
  ) {
    this.#engine = engine;
    this.issued = issued;
    this.registry = registry;
    this.health = health;
    this.#backends = new BackendSync(registry, health);
    this.logger = logger;
    this.#exhausted = new ExhaustionLog(logger);
    this.#routeDebug = new RouteDebugLog(logger);
    this.#routesLog = new RoutesLog(logger);
    this.#accessLogs = accessLogs;
    this.random = random;
  }

  /** Builds the first engine of a runtime. */
  static async create(loaded: LoadedConfig, options: RuntimeOptions = {}): Promise<Runtime> {
    checkNofile(loaded.file, loaded.config, undefined, perConnection(loaded), panelReserve(loaded));
    const logger =
      options.logger ?? createLogger(loaded.config.log.level, undefined, { format: loaded.config.log.format });
    const random = options.random ?? defaultRandom;
    const accessLogs = new AccessLogs(loaded.config, options.accessLog, {
      rules: options.accessLog === undefined || options.accessLogRules === true,
      random,
    });
    const panel = loaded.panel.factory;
    // A panel whose threads share backend state provides the registry (the worker panel's is shared memory).
    const registry =
      options.registry ?? (isRegistryProvider(panel) ? panel.registry(loaded.panel.options) : new LocalRegistry());
    const health = new HealthManager(registry, logger);
    let runtime: Runtime | undefined;
    const context: PluginContext = {
      configDir: loaded.dir,
      registry,
      logger,
      random,
      snapshotChanged: (book) => {
        if (runtime !== undefined) runtime.#syncBackends(book);
      },
    };
    const issued = new IssuedCertificates(logger);
    const counting =
      options.policyCounting ?? (sharesPolicyCounters(panel, loaded.panel.options) ? sharedCounting : localCounting);
    const policyCounting: PolicyCounting =
      options.fleetCounters === undefined ? counting : { ...counting, fleet: options.fleetCounters };
    let engine: Engine;
    try {
      engine = await buildEngine(loaded, context, issued, { counting: policyCounting });
    } catch (e) {
      health.close();
      throw e;
    }
    runtime = new Runtime(engine, registry, health, logger, accessLogs, random, issued);
    runtime.#injectedLogger = options.logger !== undefined;
    runtime.#policyCounting = policyCounting;
    if (options.admission !== undefined) runtime.admission = options.admission;
    runtime.reusePort = options.reusePort ?? false;
    runtime.#syncBackends(engine.book);
    logPolicyWarnings(logger, engine);
    return runtime;
  }

  /** Counts one connect that failed for lack of descriptors; logs at most once per 10 s. */
  noteExhausted(): void {
    this.#exhausted.note();
  }

  /**
   * After the current book swapped its snapshot: keep registry records for the backends that
   * stay (new ones start their slow-start ramp), drop the rest, and check exactly these; only
   * what changed, when the book lists its backends in groups (app/runtime/backend-sync.ts).
   */
  #syncBackends(book: AddressBook): void {
    if (book !== this.#engine.book) return;
    this.#backends.sync(book);
    this.#routesLog.applied(book);
    for (const l of this.#snapshotListeners) l(book);
  }

  /** Calls `listener` after every snapshot swap of the current book; returns the unsubscribe. */
  onSnapshot(listener: (book: AddressBook) => void): () => void {
    this.#snapshotListeners.add(listener);
    return () => this.#snapshotListeners.delete(listener);
  }

  /** The engine new connections use. */
  get engine(): Engine {
    return this.#engine;
  }

  /** Where the routes serving now came from, their counts and the updates since start (GET /routes, /metrics). */
  get routes(): RoutesState | undefined {
    return this.#routesLog.state;
  }

  /** The access log in use (a reload may switch its target). */
  get accessLog(): ReopenableAccessLog {
    return this.#accessLogs.log;
  }

  /** Access lines written and skipped, by the rule that decided (/metrics). */
  get accessLogCounts(): AccessLogs['counts'] {
    return this.#accessLogs.counts;
  }

  /** The plugin context for building another engine on this runtime. */
  context(loaded: LoadedConfig): PluginContext {
    return {
      configDir: loaded.dir,
      registry: this.registry,
      logger: this.logger,
      random: this.random,
      snapshotChanged: (book) => this.#syncBackends(book),
    };
  }

  /** Marks one connection as running on `engine` (the panel calls it at accept). */
  hold(engine: Engine): void {
    this.#holds.set(engine, (this.#holds.get(engine) ?? 0) + 1);
  }

  /** The connection `hold` counted has ended; a retired engine closes with its last connection. */
  release(engine: Engine): void {
    const n = (this.#holds.get(engine) ?? 1) - 1;
    if (n > 0) {
      this.#holds.set(engine, n);
      return;
    }
    this.#holds.delete(engine);
    if (this.#retired.delete(engine)) this.#closeRetired(engine);
  }

  /** Swaps in a new engine and returns the old one (the caller drains and closes it). */
  swap(engine: Engine): Engine {
    const old = this.#engine;
    this.#engine = engine;
    this.#syncBackends(engine.book);
    return old;
  }

  /** Closes `engine` once no connection holds it any more (now, if none does). */
  retire(engine: Engine): void {
    if (engine === this.#engine) return;
    if ((this.#holds.get(engine) ?? 0) === 0) this.#closeRetired(engine);
    else this.#retired.add(engine);
  }

  #closeRetired(engine: Engine): void {
    closeEngine(engine).catch((err: unknown) =>
      this.logger.warn({ version: engine.version, err: (err as Error).message }, 'closing a retired engine failed'),
    );
  }

  /**
   * Hot reload: builds and starts a complete engine for `loaded` (nofile check, policies on the
   * current engine's counters, address book, operator), runs `beforeSwap` (the panel binds new listeners there; it returns the commit
   * step), swaps one reference and retires the old engine. On any failure what was built is
   * closed and the old engine keeps serving; the error is rethrown.
   */
  async reload(loaded: LoadedConfig, beforeSwap?: (engine: Engine) => Promise<() => void>): Promise<Engine> {
    checkNofile(loaded.file, loaded.config, undefined, perConnection(loaded), panelReserve(loaded));
    // The access-log rules compile before anything is built: a bad rule refuses the reload.
    const applyAccessLog = this.#accessLogs.prepare(loaded.config);
    const engine = await buildEngine(loaded, this.context(loaded), this.issued, {
      previous: this.#engine.policies,
      counting: this.#policyCounting,
    });
    let commit: (() => void) | undefined;
    try {
      commit = await beforeSwap?.(engine);
    } catch (e) {
      await closeEngine(engine).catch(() => {});
      throw e;
    }
    const old = this.swap(engine);
    commit?.();
    this.#applyLog(loaded);
    applyAccessLog();
    logPolicyWarnings(this.logger, engine);
    this.retire(old);
    return engine;
  }

  /** Log level and format follow the config (the access log follows through `AccessLogs.prepare`). */
  #applyLog(after: LoadedConfig): void {
    if (!this.#injectedLogger) configureLogger(this.logger, after.config.log);
  }

  async close(): Promise<void> {
    this.#routeDebug.close();
    this.health.close();
    const retired = [...this.#retired];
    this.#retired.clear();
    await Promise.all(retired.map((e) => closeEngine(e).catch(() => {})));
    await closeEngine(this.#engine);
    this.#accessLogs.flush();
  }
}
