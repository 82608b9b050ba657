/**
 * What the process does with an error no connection caught. Bad input never gets here: it is a
 * typed error answered on its connection, and every panel's per-connection and per-stream path
 * ends in a catch that logs, closes that connection and gives its slot back. What is left is a
 * bug, so it is logged loudly, with its stack, at `fatal` or `error`:
 *
 * 1. `unhandledRejection`: logged, the process keeps serving. A rejection surfaces after its
 *    stack has unwound at an `await`; the chain that lost its handler belonged to one connection,
 *    and exiting would turn that bug into an outage for every client. (Envoy's `ENVOY_BUG`:
 *    log and count in release builds; Node's `--unhandled-rejections=warn`.)
 * 2. `uncaughtException`: logged, then the router drains and exits 1, as on SIGTERM, so the
 *    supervisor starts a clean process. A synchronous throw may have left shared state half
 *    updated, and Node documents that resuming after it is unsafe. (HAProxy `BUG_ON` and
 *    Envoy `RELEASE_ASSERT` abort; nginx's master respawns a worker that died. Draining first
 *    keeps the other clients' requests, within `limits.drainTimeout`.)
 *
 * Installed by `switchboard start` (the CLI process) and by each worker thread, with rule 1
 * only: an uncaught exception in a thread ends that thread and the worker panel restarts it
 * (panels/worker/README.md §6), the other threads untouched. Never by `startRouter`, which
 * embedders and tests call: a library does not take over process-wide handlers (STYLE §13b).
 */
import type { Logger } from '../../src/base/log.ts';

/**
 * Installs the policy; `stop` drains and exits with the given code (without it, rule 2 is left to
 * Node: a worker thread). Returns the uninstall.
 */
export function installProcessPolicy(logger: Logger, stop?: (reason: string, exitCode: number) => void): () => void {
  const onRejection = (reason: unknown) => {
    logger.error({ err: reason }, 'internal error: unhandled promise rejection (a bug; serving on)');
  };
  const onException = (err: Error) => {
    logger.fatal({ err }, 'internal error: uncaught exception (a bug); draining, then exiting 1');
    stop?.('uncaughtException', 1);
  };
  process.on('unhandledRejection', onRejection);
  if (stop !== undefined) process.on('uncaughtException', onException);
  return () => {
    process.removeListener('unhandledRejection', onRejection);
    process.removeListener('uncaughtException', onException);
  };
}
