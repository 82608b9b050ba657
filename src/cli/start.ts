/**
 * `switchboard start`: load and validate the config, build the runtime, start the panel, and
 * close cleanly on SIGINT/SIGTERM (a second signal exits at once).
 */
import { type ConfigOverrides, loadConfig } from '../config/load.ts';
import { type BoundPanel, resolvePanel } from '../panels.ts';
import { Runtime, type RuntimeOptions } from '../runtime.ts';

/** A started router: the runtime and its panel. */
export interface Router {
  readonly runtime: Runtime;
  readonly panel: BoundPanel;
  close(): Promise<void>;
}

/** Loads `file` and starts the router it describes. */
export async function startRouter(
  file: string,
  overrides: ConfigOverrides = {},
  options: RuntimeOptions = {},
): Promise<Router> {
  const loaded = await loadConfig(file, overrides);
  return startLoaded(loaded, options);
}

/** Starts a router from an already validated config. */
export async function startLoaded(
  loaded: Awaited<ReturnType<typeof loadConfig>>,
  options: RuntimeOptions = {},
): Promise<Router> {
  const factory = resolvePanel(loaded.config.panel.name);
  const runtime = await Runtime.create(loaded, options);
  const panel = factory.create(runtime);
  try {
    await panel.start();
  } catch (e) {
    await runtime.close();
    throw e;
  }
  runtime.logger.info(
    { version: runtime.engine.version, panel: factory.name, config: loaded.file },
    'switchboard started',
  );
  return {
    runtime,
    panel,
    async close() {
      await panel.close();
      await runtime.close();
    },
  };
}

/** Runs until SIGINT/SIGTERM. */
export async function runStart(file: string, overrides: ConfigOverrides): Promise<void> {
  const router = await startRouter(file, overrides);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      router.runtime.logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    router.runtime.logger.info({ signal }, 'shutting down');
    router.close().then(
      () => process.exit(0),
      (err: unknown) => {
        router.runtime.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
