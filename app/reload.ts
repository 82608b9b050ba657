/**
 * Hot reload of the whole config, one entry for its three triggers (file watch, SIGHUP,
 * `POST /reload`):
 *
 * 1. Read the config file. Text identical to the running config → no-op (`changed: false`).
 * 2. Load and validate it whole (src/config/load.ts, with the CLI overrides of the first start).
 *    A change of panel (or of its options) needs a restart and fails the reload, and so does
 *    adding or removing the `admin` section.
 * 2b. Stages registered by the parts that outlive an engine (`addStage`: the admin listener
 *    rebinding a changed `admin.address`) prepare the new config; if one fails, or the engine
 *    swap below fails, every prepared stage is aborted, else committed after the swap.
 * 3. `runtime.reload`: check the descriptor budget, build and start the new engine (address
 *    book, operator), let the panel bind new or moved listeners, swap one reference, and retire
 *    the old engine once its connections end. Backend state lives in the shared registry, so
 *    backends that stay keep health, counters and slow start.
 * 4. Any failure leaves the running config untouched; every error is logged with its path,
 *    returned to the caller (the admin API answers non-2xx) and published on
 *    `switchboard:reload` with the outcome.
 *
 * Reloads are serialised: a trigger that arrives while one runs waits for it.
 */

import { channels } from '../src/base/diagnostics.ts';
import { SwitchboardError } from '../src/base/errors.ts';
import { type FileWatcher, watchFiles } from '../src/base/file-watch.ts';
import type { Panel } from '../src/contracts/types.ts';
import { followsEngine, isReconfigurable } from '../src/panel/capabilities.ts';
import { type ConfigOverrides, type LoadedConfig, loadConfig } from './load-config.ts';
import type { ReloadResult, StagedChange } from './runtime/reload-result.ts';
import type { Runtime } from './runtime/runtime.ts';

export type { ReloadResult, StagedChange } from './runtime/reload-result.ts';

const noop = () => {};

function errorLines(e: unknown): string[] {
  const errors = (e as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.every((x) => typeof x === 'string') && errors.length > 0) return errors;
  return [(e as Error).message ?? String(e)];
}

/** Prepares the change `next` brings against `current` (throws, with a config path, to refuse it). */
export type ReloadStage = (next: LoadedConfig, current: LoadedConfig) => Promise<StagedChange | undefined>;

/** Reloads one router's config file on demand, on change (watch) and on SIGHUP. */
export class Reloader {
  readonly #runtime: Runtime;
  readonly #panel: Panel;
  readonly #overrides: ConfigOverrides;
  #queue: Promise<unknown> = Promise.resolve();
  #watcher: FileWatcher | undefined;
  #onSighup: (() => void) | undefined;
  readonly #stages: ReloadStage[] = [];

  constructor(runtime: Runtime, panel: Panel, overrides: ConfigOverrides = {}) {
    this.#runtime = runtime;
    this.#panel = panel;
    this.#overrides = overrides;
  }

  /** The config file this router was started from. */
  get file(): string {
    return this.#runtime.engine.loaded.file;
  }

  /** Reloads now (after any reload in progress). Never throws: failures are in the result. */
  reload(trigger = 'call'): Promise<ReloadResult> {
    const next = this.#queue.then(() => this.#reload(trigger));
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Reloads whenever the config file changes (stat polling, debounced). */
  watch(intervalMs = 250): void {
    this.#watcher?.close();
    this.#watcher = watchFiles([this.file], () => void this.reload('watch'), intervalMs);
  }

  /** Runs `stage` on every reload that changes the config (see the file header, step 2b). */
  addStage(stage: ReloadStage): void {
    this.#stages.push(stage);
  }

  /** Reloads on SIGHUP. */
  handleSighup(): void {
    if (this.#onSighup !== undefined) return;
    this.#onSighup = () => void this.reload('SIGHUP');
    process.on('SIGHUP', this.#onSighup);
  }

  /** Stops watching and listening for SIGHUP. */
  close(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#onSighup !== undefined) process.removeListener('SIGHUP', this.#onSighup);
    this.#onSighup = undefined;
  }

  async #reload(trigger: string): Promise<ReloadResult> {
    const runtime = this.#runtime;
    const current = runtime.engine;
    let loaded: LoadedConfig;
    try {
      loaded = await loadConfig(this.file, this.#overrides);
      if (loaded.text === current.loaded.text) {
        return this.#report({ ok: true, changed: false, version: current.version, errors: [], trigger });
      }
      if (loaded.config.panel.name !== current.loaded.config.panel.name) {
        throw new SwitchboardError(
          'SWB_ERR_CONFIG',
          `panel: changing the panel (${current.loaded.config.panel.name} → ${loaded.config.panel.name}) needs a restart`,
        );
      }
      if (JSON.stringify(loaded.config.panel) !== JSON.stringify(current.loaded.config.panel)) {
        throw new SwitchboardError('SWB_ERR_CONFIG', `panel: changing the panel's options needs a restart`);
      }
      const hadAdmin = current.loaded.config.admin !== undefined;
      if (hadAdmin !== (loaded.config.admin !== undefined)) {
        throw new SwitchboardError(
          'SWB_ERR_CONFIG',
          `admin: ${hadAdmin ? 'removing' : 'adding'} the admin section needs a restart`,
        );
      }
      const staged: StagedChange[] = [];
      const panel = this.#panel;
      let engine: Awaited<ReturnType<Runtime['reload']>>;
      try {
        for (const stage of this.#stages) {
          const change = await stage(loaded, current.loaded);
          if (change !== undefined) staged.push(change);
        }
        engine = await runtime.reload(loaded, async (next) => {
          // New or moved listeners are bound first; engines running elsewhere (worker threads)
          // then build and bind theirs. Either failing aborts the reload before the swap.
          const commit = isReconfigurable(panel) ? await panel.reconfigure(loaded.config.listeners) : noop;
          if (followsEngine(panel)) await panel.prepareEngine(next);
          return commit;
        });
      } catch (e) {
        for (const change of staged) await change.abort();
        throw e;
      }
      for (const change of staged) change.commit();
      return this.#report({ ok: true, changed: true, version: engine.version, errors: [], trigger });
    } catch (e) {
      return this.#report({ ok: false, changed: false, version: current.version, errors: errorLines(e), trigger });
    }
  }

  #report(result: ReloadResult): ReloadResult {
    const log = this.#runtime.logger;
    if (!result.ok) {
      log.error(
        { trigger: result.trigger, version: result.version, errors: result.errors },
        'reload failed; config unchanged',
      );
    } else if (result.changed) log.info({ trigger: result.trigger, version: result.version }, 'config reloaded');
    else log.info({ trigger: result.trigger, version: result.version }, 'reload: config unchanged');
    if (channels.reload.hasSubscribers) channels.reload.publish(result);
    return result;
  }
}
