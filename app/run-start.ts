/**
 * `switchboard start` as a process (the CLI and `npm start`'s demo): what `startRouter` leaves to
 * its caller because it belongs to the whole process.
 *
 * 1. `--pid-file`: a file naming a live process refuses the start before anything binds; the
 *    file is written once every listener is bound and removed at exit (pid-file.ts).
 * 2. The router starts; the config file is watched unless `--no-watch` (SIGHUP and
 *    `POST /reload` reload either way); V8's young generation is capped.
 * 3. SIGHUP reloads, SIGUSR1 reopens the access-log file.
 * 4. SIGTERM, SIGINT, or the end of the wrapper that started the router (npm, npx, an IPC
 *    parent: src/process/parent-watch.ts): drain within `limits.drainTimeout`, close, exit 0. A
 *    second signal exits at once (1), unless it is the same signal within REPEAT_MS of the first:
 *    a terminal's Ctrl-C reaches both npm and the router, and npm forwards its copy.
 * 5. An error no connection caught: runtime/process-policy.ts (an uncaught exception drains and
 *    exits 1).
 */
import { followsEngine } from '../src/panel/capabilities.ts';
import { followParent } from '../src/process/parent-watch.ts';
import { capYoungGeneration, releaseYoungGeneration } from '../src/process/young-generation.ts';
import type { ConfigOverrides } from './load-config.ts';
import { checkPidFile, writePidFile } from './pid-file.ts';
import { installProcessPolicy } from './runtime/process-policy.ts';
import { startRouter } from './start.ts';

/** A repeat of the first stop signal within this many ms is the same stop, not a second one. */
export const REPEAT_MS = 1000;

/** What `switchboard start`'s process-level flags ask for. */
export interface RunOptions {
  /** Watch the config file and reload on change (default true; `--no-watch` turns it off). */
  readonly watch?: boolean;
  /** `--pid-file`: where to write the pid once the listeners are bound. */
  readonly pidFile?: string;
}

/** Runs until stopped (see the file header). */
export async function runStart(file: string, overrides: ConfigOverrides, options: RunOptions = {}): Promise<void> {
  if (options.pidFile !== undefined) checkPidFile(options.pidFile);
  const watch = options.watch ?? true;
  const router = await startRouter(file, overrides, { watch });
  if (options.pidFile !== undefined) {
    try {
      writePidFile(options.pidFile);
    } catch (e) {
      await router.close();
      throw e;
    }
  }
  // The p99: scavenges of a small young generation are short (src/process/young-generation.ts); the
  // CLI held its growth until now. A panel whose threads run the engine (worker) gives them
  // their own cap; the growth factor is process-wide, so the main thread's would stop theirs too.
  if (followsEngine(router.panel)) releaseYoungGeneration();
  else capYoungGeneration();
  const { logger } = router.runtime;
  if (!watch) logger.info({ config: file }, 'config file not watched (--no-watch): reload with SIGHUP or POST /reload');
  router.reloader.handleSighup();
  process.on('SIGUSR1', () => {
    router.runtime.accessLog.reopen();
    logger.info('access log reopened');
  });
  let first: { signal: string; at: number } | undefined;
  const stop = (signal: string, exitCode = 0) => {
    if (first !== undefined) {
      if (signal === first.signal && Date.now() - first.at < REPEAT_MS) return;
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    first = { signal, at: Date.now() };
    logger.info({ signal, drainTimeout: router.runtime.engine.limits.drainTimeout }, 'draining, then shutting down');
    router.close().then(
      () => {
        logger.info('shut down');
        process.exit(exitCode);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Not `stop` itself: node passes the signal number as a second argument (it would be the exit code).
  process.on('SIGINT', (signal) => stop(signal));
  process.on('SIGTERM', (signal) => stop(signal));
  installProcessPolicy(logger, stop);
  // A wrapper that ends while the router drains already asked for this stop: not a second one.
  followParent((reason) => {
    if (first !== undefined) return;
    logger.info({ reason }, 'the process that started the router exited');
    stop('parent');
  });
}
