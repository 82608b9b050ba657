/**
 * The explainer on a running router (`POST /explain`, which `switchboard route --admin` asks):
 * the engine traffic uses now, asked through the same operator code over the same backend
 * records, without advancing anything.
 *
 * 1. The book and the `policies:` rules are the running engine's own (asking takes nothing).
 * 2. The operator is a fresh instance of the configured factory over a read-only view of the
 *    runtime's registry (registry-view.ts): the records every panel's operators read (health
 *    from passive failures and active probes, drain and disable in both scopes, weight
 *    overrides, slow start), in shared memory under the worker panel. The live operator is not
 *    asked, so its balancing does not move for the question.
 * 3. A second instance over an empty registry (every backend healthy at its configured weight)
 *    gives the all-healthy answer for the footnote. Both draw from one seed, so a random step
 *    (GSLB on an empty hash key, `random`, `p2c`) draws the same in both.
 * 4. `close()` closes both instances.
 */
import { createLogger } from '../../src/base/log.ts';
import { seededRandom } from '../../src/base/random.ts';
import type { BackendRegistry } from '../../src/contracts/backend-registry.ts';
import type { OperatorInstance } from '../../src/contracts/plugin.ts';
import type { Engine } from '../../src/panel/contract.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import type { OverrideLookup, ProbeLookup } from './backends.ts';
import type { ExplainEngine } from './explain.ts';
import { registryView } from './registry-view.ts';

/** An explain engine on the running router; `close` when answered. */
export interface LiveExplain {
  readonly engine: ExplainEngine;
  close(): Promise<void>;
}

function operatorOver(engine: Engine, registry: BackendRegistry, seed: number): OperatorInstance {
  const { factory, options } = engine.loaded.operator;
  return factory.create(options, {
    configDir: engine.loaded.dir,
    registry,
    logger: createLogger('silent'),
    random: seededRandom(seed),
  });
}

/** Where the `why` of each backend comes from besides the registry (backends.ts). */
export interface LiveSources {
  /** Who set each admin mode and weight, in which scope (app/fleet/backend-state.ts). */
  readonly overrides?: OverrideLookup | undefined;
  /** The last health probe of each backend (src/health/manager.ts). */
  readonly probes?: ProbeLookup | undefined;
}

/** Steps 1–3 for `engine` (the one new connections use) over the runtime's `registry`. */
export async function openLiveExplain(
  engine: Engine,
  registry: BackendRegistry,
  sources: LiveSources = {},
): Promise<LiveExplain> {
  const seed = Math.floor(Math.random() * 2 ** 32);
  const view = registryView(registry);
  const operator = operatorOver(engine, view, seed);
  const allHealthy = operatorOver(engine, new LocalRegistry(), seed);
  const started: OperatorInstance[] = [];
  try {
    for (const o of [operator, allHealthy]) {
      await o.start?.();
      started.push(o);
    }
  } catch (e) {
    for (const o of started.reverse()) await o.close?.();
    throw e;
  }
  return {
    engine: {
      book: engine.book,
      operator,
      listeners: engine.loaded.config.listeners,
      policies: engine.policies,
      live: { registry: view, allHealthy, overrides: sources.overrides, probes: sources.probes },
    },
    async close() {
      await allHealthy.close?.();
      await operator.close?.();
    },
  };
}
