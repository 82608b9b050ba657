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
import type { Limits } from './config/schema.ts';
import type { LoadedConfig } from './config/load.ts';
import { type AccessLog, createAccessLog, createLogger, type Logger } from './log.ts';
import type { OperatorInstance, PluginContext } from './plugin.ts';
import { defaultRandom, type Random } from './random.ts';
import type { AddressBook } from './types.ts';

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
  readonly logger: Logger;
  readonly accessLog: AccessLog;
  readonly random: Random;

  private constructor(engine: Engine, registry: BackendRegistry, logger: Logger, accessLog: AccessLog, random: Random) {
    this.#engine = engine;
    this.registry = registry;
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
    const engine = await buildEngine(loaded, { configDir: loaded.dir, registry, logger, random });
    return new Runtime(engine, registry, logger, accessLog, random);
  }

  /** The engine new connections use. */
  get engine(): Engine {
    return this.#engine;
  }

  /** The plugin context for building another engine on this runtime. */
  context(loaded: LoadedConfig): PluginContext {
    return { configDir: loaded.dir, registry: this.registry, logger: this.logger, random: this.random };
  }

  /** Swaps in a new engine and returns the old one (the caller drains and closes it). */
  swap(engine: Engine): Engine {
    const old = this.#engine;
    this.#engine = engine;
    return old;
  }

  async close(): Promise<void> {
    await closeEngine(this.#engine);
  }
}
