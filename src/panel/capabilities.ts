/**
 * The panel plugin contract (DESIGN "The three roles"), shaped like the operator and address-book
 * factories (src/contracts/plugin.ts): a factory registered by name, with an options schema for the keys
 * beside `name` in `panel:` and a pure `create(runtime, options)` (the runtime first: every panel
 * needs it, few take options); the instance owns its listeners. Optional capabilities are second interfaces the composition layer detects with the
 * guards below (STYLE §3), never casts:
 *
 *   factory: PanelValidator (refuses what it cannot honour), RegistryProvider (shared state)
 *   panel:   ReconfigurablePanel (listeners follow reloads), ListenerCounts (metrics),
 *            EngineFollower (engines run elsewhere, e.g. worker threads, follow the main one)
 *   lent:    StreamRouter (the http2 panel's per-stream engine, which app/panels.ts gives the
 *            net panel for `listeners[].h2c: route`; a panel never imports another panel)
 */

import type { Config, ListenerConfig } from '../config/schema.ts';
import type { BackendRegistry } from '../contracts/backend-registry.ts';
import type { AddressBook, Panel } from '../contracts/types.ts';
import type { IssuedUpdate } from '../tls/issued.ts';
import type { Engine, PanelFactory } from './contract.ts';

/**
 * Optional factory capability: the listener, limits and log options of `config` this panel
 * cannot honour, one line each, `path: what (why; what to use instead)`. Run at config load,
 * so `check`, `start` and reload all refuse them (DESIGN "Two pipelines, every panel").
 */
export interface PanelValidator<O = unknown> {
  validate(config: Config, options: O): string[];
}

export function isPanelValidator<O>(f: PanelFactory<O>): f is PanelFactory<O> & PanelValidator<O> {
  return typeof (f as Partial<PanelValidator>).validate === 'function';
}

/**
 * Optional factory capability: the most file descriptors one client connection may hold on this
 * panel under `config`, for the descriptor budget (src/process/nofile.ts). Without it, the splicing
 * figure applies (`descriptorsPerConnection`: 2, plus idle upstreams in per-request routing).
 */
export interface DescriptorBudget<O = unknown> {
  descriptorsPerConnection(config: Config, options: O): number;
  /**
   * Descriptors the panel holds beside its connections and NOFILE_RESERVE, whatever the load
   * (the worker panel: each thread's event loop and its own `reusePort` listeners). 0 if absent.
   */
  reservedDescriptors?(config: Config, options: O): number;
}

export function hasDescriptorBudget<O>(f: PanelFactory<O>): f is PanelFactory<O> & DescriptorBudget<O> {
  return typeof (f as Partial<DescriptorBudget>).descriptorsPerConnection === 'function';
}

/** Optional factory capability: the backend registry the panel's runtime must use (shared across threads). */
export interface RegistryProvider<O = unknown> {
  registry(options: O): BackendRegistry;
}

export function isRegistryProvider<O>(f: PanelFactory<O>): f is PanelFactory<O> & RegistryProvider<O> {
  return typeof (f as Partial<RegistryProvider>).registry === 'function';
}

/**
 * Optional panel-factory capability: the panel's threads count `policies:` rules once for the
 * process (the worker panel), so every engine compiles them on a shared counter store
 * (src/policy/shared-counters.ts) that the panel hands its threads.
 */
export interface SharedPolicyCounting<O = unknown> {
  sharesPolicyCounters(options: O): boolean;
}

export function sharesPolicyCounters<O>(f: PanelFactory<O>, options: O): boolean {
  const share = (f as Partial<SharedPolicyCounting<O>>).sharesPolicyCounters;
  return typeof share === 'function' && share(options);
}

/** Optional panel capability: applies listener changes in place on reload. */
export interface ReconfigurablePanel {
  /** Step 1 binds new or moved listeners (throws on failure); the returned step 2 commits after the swap. */
  reconfigure(listeners: readonly ListenerConfig[]): Promise<() => void>;
}

export function isReconfigurable(p: Panel): p is Panel & ReconfigurablePanel {
  return typeof (p as Partial<ReconfigurablePanel>).reconfigure === 'function';
}

/** Optional panel capability: open connections by listener name (metrics, worker stats). */
export interface ListenerCounts {
  connectionsByListener(): Record<string, number>;
}

export function countsListeners(p: Panel): p is Panel & ListenerCounts {
  return typeof (p as Partial<ListenerCounts>).connectionsByListener === 'function';
}

/**
 * Optional panel capability: the panel runs copies of the engine elsewhere (the worker panel's
 * threads) and the composition layer keeps them in step with the main thread's engine.
 */
export interface EngineFollower {
  /** A built engine is about to be swapped in: ready it everywhere; a throw aborts the reload. */
  prepareEngine(engine: Engine): Promise<void>;
  /** The current engine's address book swapped its snapshot. */
  snapshotChanged(book: AddressBook): void;
}

/**
 * Optional panel capability: the panel serves TLS on other threads, so certificates obtained at
 * run time (ACME, app/acme/) and pending challenges must reach them; resolves once all have
 * applied `update` (the CA is asked to validate only then).
 */
export interface IssuedForwarder {
  forwardIssued(update: IssuedUpdate): Promise<void>;
}

export function forwardsIssued(p: Panel): p is Panel & IssuedForwarder {
  return typeof (p as Partial<IssuedForwarder>).forwardIssued === 'function';
}

export function followsEngine(p: Panel): p is Panel & EngineFollower {
  return typeof (p as Partial<EngineFollower>).prepareEngine === 'function';
}
