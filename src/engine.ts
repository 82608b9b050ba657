/**
 * What a panel needs of the router that runs it, declared in the core so that panels depend on
 * contracts, never on the composition layer (app/ implements them):
 *
 *   app/runtime.ts ──implements──► PanelRuntime ◄──reads── panels/net, panels/http2, panels/worker
 *
 * An `Engine` is one config version's routing machinery (book, operator, limits, TLS); the
 * `PanelRuntime` holds the engine in use plus what outlives reloads (registry, loggers, drain).
 * Panels read `runtime.engine` once per connection, so a connection finishes on its engine.
 */
import type { BackendRegistry } from './backend-registry.ts';
import type { LoadedConfig } from './config/loaded.ts';
import type { Limits } from './config/schema.ts';
import type { DrainSet } from './drain.ts';
import type { Admission } from './listener/admission.ts';
import type { Logger, ReopenableAccessLog } from './log.ts';
import type { OperatorInstance } from './plugin.ts';
import type { EngineTls } from './tls/engine-tls.ts';
import type { AddressBook } from './types.ts';

/** One config version's routing machinery. Immutable once built. */
export interface Engine {
  readonly loaded: LoadedConfig;
  readonly limits: Limits;
  readonly book: AddressBook;
  readonly operator: OperatorInstance;
  /** `sha256(config text)[0:12]@ISO time`, shown in logs and the admin API. */
  readonly version: string;
  /** Terminating listeners' certificates and the upstream TLS contexts of this config (src/tls/). */
  readonly tls: EngineTls;
}

/** The runtime as a panel sees it. */
export interface PanelRuntime {
  /** The engine new connections use. */
  readonly engine: Engine;
  readonly registry: BackendRegistry;
  readonly logger: Logger;
  /** The access log in use (a reload may switch its target). */
  readonly accessLog: ReopenableAccessLog;
  /** Connections that can close at a clean boundary on shutdown (src/drain.ts). */
  readonly drain: DrainSet;
  /**
   * The connection caps of the process (src/listener/admission.ts): local counters, or in a
   * worker thread a view on the buffer the worker panel shares between its threads.
   */
  readonly admission: Admission;
  /** Listeners bind with SO_REUSEPORT (worker threads: every thread binds the same address). */
  readonly reusePort: boolean;
  /** Marks one connection as running on `engine` (the panel calls it at accept). */
  hold(engine: Engine): void;
  /** The connection `hold` counted has ended; a retired engine closes with its last connection. */
  release(engine: Engine): void;
  /** Counts one connect that failed for lack of descriptors (rate-limited log line). */
  noteExhausted(): void;
}
