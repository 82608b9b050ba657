/**
 * Exit codes and the one place the CLI turns an error into stderr lines (docs/operations.md "Exit codes"),
 * shared by the commands (cli/) and the demo (examples/demo/start.ts):
 *
 *   0  ok (route: routed)
 *   1  runtime failure: a port in use, an address-book store that does not answer (an
 *      address-book error caused by the store's own error), an unexpected error (route: no route)
 *   2  usage: an unknown command or option, a bad option value
 *   3  invalid config: the file, or what it names (certificates, routes files, an address-book
 *      source that is missing or invalid)
 *
 * Every expected failure is one line per problem, `<config path>: <message>`, never a stack. An
 * unexpected error (a bug) prints its message and exits 1; its stack only with `--verbose` or
 * the environment variable SWITCHBOARD_DEBUG=1.
 */
import { CommanderError } from 'commander';
import { isSwitchboardError } from '../src/base/errors.ts';
import { ConfigError, problemLines } from '../src/config/errors.ts';

export const EXIT = { ok: 0, failure: 1, usage: 2, config: 3 } as const;

/** Stacks for unexpected errors: `--verbose` anywhere on the command line, or SWITCHBOARD_DEBUG set (not 0). */
export function debugEnabled(argv: readonly string[] = process.argv, env = process.env): boolean {
  const v = env.SWITCHBOARD_DEBUG;
  return argv.includes('--verbose') || (v !== undefined && v !== '' && v !== '0' && v !== 'false');
}

/** Codes whose errors are about the config or what it names. */
const CONFIG_CODES = new Set([
  'SWB_ERR_CONFIG',
  'SWB_ERR_CONDITION',
  'SWB_ERR_ADDRESS_BOOK',
  'SWB_ERR_PLUGIN',
  // A file the config names that could not be read safely (src/base/safe-file.ts).
  'SWB_ERR_FILE',
]);

/** An address-book error caused by an error that is not ours: the store did not answer (etcd down). */
export function storeDown(e: Error): boolean {
  if ((e as { code?: string }).code !== 'SWB_ERR_ADDRESS_BOOK') return false;
  let cause: unknown = e.cause;
  while (isSwitchboardError(cause)) cause = cause.cause;
  return cause instanceof Error;
}

/**
 * The exit code of a Switchboard error: 3 when it is about the config or what it names (a routes
 * file, a BFE conf dir, a database's rows), 1 when a store did not answer or for anything else.
 * The `import-bfe`, `db` and `etcd` commands print their own one-line form and use this code.
 */
export function exitCodeOf(e: unknown): number {
  if (e instanceof ConfigError) return EXIT.config;
  if (!isSwitchboardError(e)) return EXIT.failure;
  return CONFIG_CODES.has(e.code) && !storeDown(e) ? EXIT.config : EXIT.failure;
}

/** Writes `e` to stderr as described above and returns the exit code. */
export function reportError(
  e: unknown,
  debug = debugEnabled(),
  write = (s: string) => process.stderr.write(s),
): number {
  if (e instanceof CommanderError) {
    // commander has printed its own message already (help and version are not errors).
    return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.exitCode === 0
      ? EXIT.ok
      : EXIT.usage;
  }
  if (e instanceof ConfigError) {
    for (const line of e.errors) write(`${line}\n`);
    return EXIT.config;
  }
  if (isSwitchboardError(e)) {
    for (const line of problemLines(e)) write(`${line}\n`);
    if (debug && e.stack !== undefined) write(`${e.stack}\n`);
    return exitCodeOf(e);
  }
  const err = e instanceof Error ? e : new Error(String(e));
  if (debug) write(`switchboard: internal error: ${err.stack ?? err.message}\n`);
  else {
    const first = err.message.split('\n')[0] ?? '';
    write(`switchboard: internal error: ${first} (pass --verbose or set SWITCHBOARD_DEBUG=1 for the stack)\n`);
  }
  return EXIT.failure;
}
