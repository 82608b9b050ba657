/**
 * Warnings about `policies:` that the config still allows (issue 42 item 4): printed by
 * `switchboard check` (app/check-config.ts, through the same channel as the h2c warnings) and
 * logged once when the runtime starts or reloads a config (runtime.ts).
 *
 * 1. `routing: per-connection` on a panel whose connections go through the net engine (net, and
 *    worker threads running it): a connection is routed once, by its first request, so a rule at
 *    `request` or `routed` sees only that request. The rule still works, for the first request
 *    of each connection; `routing: per-request` checks every one. The http2 panel routes every
 *    stream whatever `routing:` says: no warning there.
 *
 * A warning is one line naming the rule by its config path and name; the config stays valid.
 */
import { isMainThread } from 'node:worker_threads';
import type { Logger } from '../../src/base/log.ts';
import type { Config } from '../../src/config/schema.ts';
import type { Engine, LoadedConfig } from '../../src/panel/contract.ts';
import { type CompiledRule, compilePolicies, LocalCounters } from '../../src/policy/index.ts';

/** Whether the panel's connections go through the net engine (the one `routing:` applies to). */
function routesPerConnection(config: Config): boolean {
  if (config.routing !== 'per-connection') return false;
  const panel = config.panel as { name: string; engine?: unknown };
  return panel.name === 'net' || (panel.name === 'worker' && panel.engine !== 'http2');
}

/** One line per rule the config lets through with a caveat (step 1); `rules` in config order. */
export function policyWarnings(config: Config, rules: readonly Pick<CompiledRule, 'name' | 'point'>[]): string[] {
  if (!routesPerConnection(config)) return [];
  const lines: string[] = [];
  rules.forEach((rule, i) => {
    if (rule.point !== 'request' && rule.point !== 'routed') return;
    lines.push(
      `policies[${i}] (${rule.name}): runs at ${rule.point}: with routing: per-connection only the first request ` +
        'of each connection is checked; set routing: per-request to check every request',
    );
  });
  return lines;
}

/** The warnings of a loaded config (`switchboard check`): its rules compiled on throwaway counters. */
export function loadedPolicyWarnings(loaded: Pick<LoadedConfig, 'config' | 'policies' | 'dir'>): string[] {
  if (loaded.config.policies.length === 0 || !routesPerConnection(loaded.config)) return [];
  try {
    const set = compilePolicies(loaded.config.policies, {
      resolve: (use) => loaded.policies.get(use),
      configDir: loaded.dir,
      // A `scope: fleet` rule compiles on throwaway counters too (no Redis is asked here).
      ...(loaded.config.fleet?.redis === undefined ? {} : { fleetCounters: new LocalCounters() }),
    });
    return policyWarnings(loaded.config, set.rules);
  } catch {
    // A rule that does not compile is an error of config load, reported there.
    return [];
  }
}

/**
 * Logs the warnings of a started or reloaded engine on the runtime's logger: on the main thread
 * only, since the worker panel's threads run the same config (once per process, not per thread).
 */
export function logPolicyWarnings(logger: Logger, engine: Engine): void {
  if (!isMainThread) return;
  for (const line of policyWarnings(engine.loaded.config, engine.policies.rules)) logger.warn(`policies: ${line}`);
}
