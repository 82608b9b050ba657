/**
 * `switchboard start` runs without V8's memory reducer (issue 18: the first seconds after a
 * lull). `bin/switchboard.js` calls `restartWithoutMemoryReducer` before it loads the router:
 * for `start` it replaces the process with the same command under `--no-memory-reducer`
 * (`process.execve`: same pid, same descriptors, no second process), once.
 *
 * Why: the memory reducer is the V8 component that collects garbage when a process goes quiet
 * (a low allocation rate 8 s after a major GC, or at the latest 100 s after the last one). Its
 * collections reduce the memory footprint, and to do that they do not keep maps (hidden classes)
 * that no object uses any more. Between bursts of connections nothing uses the maps of sockets,
 * streams, requests and splices, so they die, and the optimised code that embeds them is thrown
 * away (`--trace-deopt`: "marking dependent code … for deoptimization, reason: embedded weak
 * objects cleared", 70-odd functions of the connection path, node's and ours). The next
 * connections run in the interpreter and the baseline tiers again, with fresh inline caches,
 * until V8 has optimised it all again: on the bench machine the net panel cost 529 µs of CPU per
 * new connection for the first 2,000 after 120 s idle, 358 and 349 for the next 2,000 and 8,000,
 * against 251 steady; under `--no-memory-reducer` 315, 263 and 259 (bench/README "After a lull").
 * The price is memory: after a burst the heap keeps its size until the next major collection
 * under load (in that test 164 MB of RSS stayed, where the reducer gave back 26 MB after 100 s).
 * A router serves the next burst; HAProxy and nginx keep their pools in the same way.
 *
 * V8 creates the memory reducer with the heap, when the isolate starts, and never reads the flag
 * again: `setFlagsFromString` at run time leaves it running (tested), hence the re-execution.
 * Left as it is:
 * - any other command (`check`, `route`, …): short-lived;
 * - a process started with `--memory-reducer` or `--no-memory-reducer` of its own (Node refuses
 *   V8 flags in NODE_OPTIONS, so this is the way back to V8's default:
 *   `node --memory-reducer bin/switchboard.js start`);
 * - a process under the inspector (`--inspect*`, on the command line or in NODE_OPTIONS):
 *   re-executing would end its debug session (`--inspect-brk` would stop it twice);
 * - a Node without `process.execve` (before 22.15/23.11, or Windows).
 * `startRouter` (embedders, tests) never re-executes anything: a library does not change
 * process-wide V8 flags for its embedder (STYLE §13b).
 */

/** The V8 flag. */
export const NO_MEMORY_REDUCER = '--no-memory-reducer';

const OWN_FLAG = /^--(no-)?memory[-_]reducer(=|$)/;
const INSPECTOR = /^--inspect(-brk|-wait)?(=|$)/;
/** Commander's options that come before the command (bin/switchboard.js → cli/index.ts). */
const GLOBAL_OPTIONS = new Set(['--verbose']);

/** The command word of `switchboard [global options] <command> …` (argv without node and script). */
export function commandOf(args: readonly string[]): string | undefined {
  for (const a of args) {
    if (GLOBAL_OPTIONS.has(a)) continue;
    return a.startsWith('-') ? undefined : a;
  }
  return undefined;
}

/**
 * The node arguments to re-execute with, or undefined when the process is left as it is: the
 * command is not `start`, node's own arguments already say something about the reducer, or the
 * inspector runs (from those arguments or NODE_OPTIONS).
 */
export function reexecArgs(
  execArgv: readonly string[],
  args: readonly string[],
  nodeOptions: string | undefined,
): string[] | undefined {
  if (commandOf(args) !== 'start') return undefined;
  if (execArgv.some((a) => OWN_FLAG.test(a) || INSPECTOR.test(a))) return undefined;
  if ((nodeOptions ?? '').split(/\s+/).some((a) => INSPECTOR.test(a))) return undefined;
  return [NO_MEMORY_REDUCER, ...execArgv];
}

/**
 * Replaces this process with `node --no-memory-reducer <its own arguments>` when `reexecArgs`
 * says so; returns (to go on as it is) otherwise, or when the system refuses the execve (the
 * refusal is written to stderr: the router then runs with the reducer).
 */
export function restartWithoutMemoryReducer(): void {
  const execArgs = reexecArgs(process.execArgv, process.argv.slice(2), process.env.NODE_OPTIONS);
  if (execArgs === undefined || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, [process.execPath, ...execArgs, ...process.argv.slice(1)], process.env);
  } catch (err) {
    process.stderr.write(
      `switchboard: could not restart without V8's memory reducer (${(err as Error).message}); running with it\n`,
    );
  }
}
