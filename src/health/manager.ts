/**
 * The health manager: one `BackendChecker` per configured backend, kept in step with the
 * snapshots (`update`, called by the runtime on every swap) and fed by the registry's connect
 * failures. Removed backends have their checker closed, whether `update` or the registry's
 * `retain` removes them first.
 */
import type { Logger } from 'pino';
import type { BackendRegistry } from '../backend-registry.ts';
import type { Backend, HealthCheckPolicy } from '../types.ts';
import { BackendChecker } from './checker.ts';
import type { ProbePolicy, ProbeProxyMode } from './probe.ts';

/** One backend and the health-check policy of its cluster. */
export interface HealthEntry {
  readonly backend: Backend;
  readonly policy: HealthCheckPolicy;
  /** The cluster's outbound PROXY mode: probes send v2 LOCAL (or v1) first when it is on. */
  readonly proxyProtocol?: ProbeProxyMode | undefined;
}

/** The policy a checker probes with: the health policy plus the PROXY mode (probe.ts reads it). */
function probePolicy(entry: HealthEntry): ProbePolicy {
  const mode = entry.proxyProtocol ?? 'off';
  return mode === 'off' ? entry.policy : { ...entry.policy, proxyProtocol: mode };
}

/** Runs the health checks of every configured backend against one registry. */
export class HealthManager {
  readonly #registry: BackendRegistry;
  readonly #checkers = new Map<string, BackendChecker>();
  readonly #unobserve: () => void;
  readonly #logger: Logger | undefined;

  constructor(registry: BackendRegistry, logger?: Logger) {
    this.#registry = registry;
    this.#logger = logger;
    this.#unobserve = registry.observe({
      onConnectFailed: (state) => this.#checkers.get(state.id)?.onConnectFailed(state),
      onRemoved: (id) => this.#remove(id),
    });
  }

  /**
   * Makes the checked set exactly `entries` (a backend listed by several clusters keeps the
   * first policy seen). New backends get a checker, kept ones take the new policy.
   */
  update(entries: Iterable<HealthEntry>): void {
    const seen = new Set<string>();
    for (const entry of entries) {
      const { backend } = entry;
      const policy = probePolicy(entry);
      if (seen.has(backend.id)) continue;
      seen.add(backend.id);
      const c = this.#checkers.get(backend.id);
      if (c !== undefined) c.update(backend, policy);
      else this.#checkers.set(backend.id, new BackendChecker(backend, policy, this.#registry, this.#log));
    }
    for (const id of [...this.#checkers.keys()]) if (!seen.has(id)) this.#remove(id);
  }

  /** Ids of the backends under check (admin, tests). */
  ids(): string[] {
    return [...this.#checkers.keys()];
  }

  /** True while a probe for `id` is scheduled or in flight. */
  probing(id: string): boolean {
    return this.#checkers.get(id)?.probing ?? false;
  }

  /** Stops every checker and unsubscribes from the registry. */
  async close(): Promise<void> {
    this.#unobserve();
    for (const c of this.#checkers.values()) c.close();
    this.#checkers.clear();
  }

  #remove(id: string): void {
    this.#checkers.get(id)?.close();
    this.#checkers.delete(id);
  }

  readonly #log = (backend: Backend, available: boolean): void => {
    if (available) this.#logger?.info({ backend: backend.id }, 'backend up');
    else this.#logger?.warn({ backend: backend.id }, 'backend down');
  };
}
