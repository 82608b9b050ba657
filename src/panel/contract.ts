/**
 * What a panel needs of the router that runs it, declared in the core so that panels depend on
 * contracts, never on the composition layer (app/ implements them):
 *
 *   app/runtime/runtime.ts ──implements──► PanelRuntime ◄──reads── panels/net, panels/http2, panels/worker
 *
 * An `Engine` is one config version's routing machinery (book, operator, limits, TLS); the
 * `PanelRuntime` holds the engine in use plus what outlives reloads (registry, loggers, drain).
 * Panels read `runtime.engine` once per connection, so a connection finishes on its engine.
 *
 * The panel factory, the resolved panel and `LoadedConfig` (a validated config with its
 * plugins resolved) live here too: a factory creates a panel from a runtime whose engine holds
 * the loaded config that names the factory, so the types refer to one another and share one
 * types-only module rather than a cycle of files. The optional capabilities a panel or factory
 * may add are in capabilities.ts.
 */
import type { z } from 'zod';
import type { Admission } from '../admission/admission.ts';
import type { Logger, ReopenableAccessLog } from '../base/log.ts';
import type { Config, Limits } from '../config/schema.ts';
import type { BackendRegistry } from '../contracts/backend-registry.ts';
import type { AddressBookFactory, OperatorFactory, OperatorInstance } from '../contracts/plugin.ts';
import type { AnyPolicyFactory } from '../contracts/policy.ts';
import type { AddressBook, Panel } from '../contracts/types.ts';
import type { DrainSet } from '../data-path/drain.ts';
import type { PolicySet } from '../policy/policy-set.ts';
import type { EngineTls } from '../tls/engine-tls.ts';

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
  /**
   * The `policies:` rules of this config, compiled and started (src/policy/); the listener
   * pipeline asks `policies.connection` at accept. Closed when the engine closes.
   */
  readonly policies: PolicySet;
}

/** The runtime as a panel sees it. */
export interface PanelRuntime {
  /** The engine new connections use. */
  readonly engine: Engine;
  readonly registry: BackendRegistry;
  readonly logger: Logger;
  /** The access log in use (a reload may switch its target). */
  readonly accessLog: ReopenableAccessLog;
  /** Connections that can close at a clean boundary on shutdown (src/data-path/drain.ts). */
  readonly drain: DrainSet;
  /**
   * The connection caps of the process (src/admission/admission.ts): local counters, or in a
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

/** A panel that can report its bound addresses (port 0 resolved), for tests and logs. */
export interface BoundPanel extends Panel {
  addresses(): Record<string, { host: string; port: number }>;
}

/** A panel plugin: `panel: { name, ...options }` in config. */
export interface PanelFactory<O = unknown> {
  readonly name: string;
  /** Schema of the options beside `name`; omitted = no options allowed. */
  readonly options?: z.ZodType<O>;
  create(runtime: PanelRuntime, options: O): BoundPanel;
}

// biome-ignore lint/suspicious/noExplicitAny: factories are stored heterogeneously by name
export type AnyPanelFactory = PanelFactory<any>;

/** A panel name with its validated options, as config load resolves it. */
export interface ResolvedPanel {
  readonly factory: AnyPanelFactory;
  readonly options: unknown;
}

/** A validated config with its plugins resolved and their options parsed. */
export interface LoadedConfig {
  readonly file: string;
  readonly dir: string;
  readonly config: Config;
  /** The panel factory named by `config.panel` and its checked options. */
  readonly panel: ResolvedPanel;
  readonly operator: { readonly factory: OperatorFactory; readonly options: unknown };
  readonly addressBook: { readonly factory: AddressBookFactory; readonly options: unknown };
  /** The factory of each `use:` of `config.policies`, by its `use:` value (built-in name or module path). */
  readonly policies: ReadonlyMap<string, AnyPolicyFactory>;
  /** The raw text, for change detection (an identical config is a no-op on reload). */
  readonly text: string;
}
