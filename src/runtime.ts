/**
 * The runtime: what one loaded config becomes. An `Engine` holds the address book, the operator
 * and the limits of one config version; the `Runtime` holds the engine in use plus what outlives
 * reloads (backend registry, loggers). Panels read `runtime.engine` once per connection, so a
 * connection finishes on the engine it started with.
 *
 *   LoadedConfig ──create──► book, operator ──start──► Engine ──swap──► runtime.engine
 */
import { createHash } from 'node:crypto';
import { BackendRegistry } from './backend-registry.ts';
import type { LoadedConfig } from './config/load.ts';
import type { Limits } from './config/schema.ts';
import { HealthManager } from './health/index.ts';
import { type AccessLog, createAccessLog, createLogger, type Logger } from './log.ts';
import type { OperatorInstance, PluginContext } from './plugin.ts';
import { defaultRandom, type Random } from './random.ts';
import { type AddressBook, isBackendLister } from './types.ts';

/** One config version's routing machinery. Immutable once built. */
export interface Engine {
  readonly loaded: LoadedConfig;
  readonly limits: Limits;
  readonly book: AddressBook;
  readonly operator: OperatorInstance;
  /** `sha256(config text)[0:12]@ISO time`, shown in logs and the admin API. */
  readonly version: string;
}

export interface RuntimeOptions {
  readonly logger?: Logger;
  readonly accessLog?: AccessLog;
  readonly random?: Random;
  readonly registry?: BackendRegistry;
}

/** Builds and starts an engine; on failure, closes what was started (reverse order). */
export async function buildEngine(loaded: LoadedConfig, context: PluginContext): Promise<Engine> {
  const book = loaded.addressBook.factory.create(loaded.addressBook.options, context);
  const operator = loaded.operator.factory.create(loaded.operator.options, context);
  await book.start();
  try {
    await operator.start?.();
  } catch (e) {
    await book.close();
    throw e;
  }
  const hash = createHash('sha256').update(loaded.text).digest('hex').slice(0, 12);
  return Object.freeze({
    loaded,
    limits: loaded.config.limits,
    book,
    operator,
    version: `${hash}@${new Date().toISOString()}`,
  });
}

/** Stops an engine's plugins (operator first, then the book: reverse of start). */
export async function closeEngine(engine: Engine): Promise<void> {
  await engine.operator.close?.();
  await engine.book.close();
}

export class Runtime {
  #engine: Engine;
  readonly registry: BackendRegistry;
  readonly health: HealthManager;
  readonly logger: Logger;
  readonly accessLog: AccessLog;
  readonly random: Random;

  private constructor(
    engine: Engine,
    registry: BackendRegistry,
    health: HealthManager,
    logger: Logger,
    accessLog: AccessLog,
    random: Random,
  ) {
    this.#engine = engine;
    this.registry = registry;
    this.health = health;
    this.logger = logger;
    this.accessLog = accessLog;
    this.random = random;
  }

  /** Builds the first engine of a runtime. */
  static async create(loaded: LoadedConfig, options: RuntimeOptions = {}): Promise<Runtime> {
    const logger = options.logger ?? createLogger(loaded.config.log.level);
    const accessLog = options.accessLog ?? createAccessLog(loaded.config.log.access);
    const registry = options.registry ?? new BackendRegistry();
    const random = options.random ?? defaultRandom;
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
    let engine: Engine;
    try {
      engine = await buildEngine(loaded, context);
    } catch (e) {
      health.close();
      throw e;
    }
    runtime = new Runtime(engine, registry, health, logger, accessLog, random);
    runtime.#syncBackends(engine.book);
    return runtime;
  }

  /**
   * After the current book swapped its snapshot: keep registry records for the backends that
   * stay (new ones start their slow-start ramp), drop the rest, and check exactly these.
   */
  #syncBackends(book: AddressBook): void {
    if (book !== this.#engine.book || !isBackendLister(book)) return;
    const entries = [...book.listBackends()];
    this.registry.retain(entries.map((e) => e.backend.id));
    this.health.update(entries.map((e) => ({ backend: e.backend, policy: e.policy.healthCheck })));
  }

  /** The engine new connections use. */
  get engine(): Engine {
    return this.#engine;
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

  /** Swaps in a new engine and returns the old one (the caller drains and closes it). */
  swap(engine: Engine): Engine {
    const old = this.#engine;
    this.#engine = engine;
    this.#syncBackends(engine.book);
    return old;
  }

  async close(): Promise<void> {
    this.health.close();
    await closeEngine(this.#engine);
  }
}
