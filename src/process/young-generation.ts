/**
 * Keeps the router's young generation at most YOUNG_SEMI_SPACE_MIB per semi-space (issue 18:
 * tail latency): the main thread of `switchboard start` through `capYoungGeneration` (net and
 * http2 panels), the worker panel's threads through their resource limits
 * (`workerYoungGenerationLimit`).
 *
 * Node 24's V8 lets a semi-space grow to 32 MiB on a 64-bit machine. A router's objects die
 * young but the ones alive at a scavenge (every open exchange) are copied, so a scavenge of a
 * full 32 MiB semi-space stopped the router 10–24 ms on the bench machine (`--trace-gc-nvp`:
 * `resize_new_space` alone took 10–20 ms), and every request in flight waits for it: that is
 * the p99. With 8 MiB semi-spaces (`--max-semi-space-size=8` on every Node process) the same
 * runs measured p99 halved (newconn 28/16 against 37/23 ms, h2 19/24 against 53/46 ms) and no
 * lower throughput (bench/README "Young generation").
 *
 * V8 reads `--max-semi-space-size` only when the isolate is created, so the running command
 * cannot set it; the growth factor it reads at each growth. After every garbage collection (a
 * `gc` PerformanceObserver) the factor is set to 1 (no growth) once the new space has reached
 * the cap, and back to V8's 2 below it (V8 shrinks it again when allocation slows). A growth
 * doubles the space, so it stops at the cap, or one doubling past it when two scavenges come
 * before the observer runs: node delivers `gc` entries one event-loop turn after the
 * collection, so that takes turns that allocate what the semi-space has left beside its
 * survivors (a test load of 2.7 MiB a turn keeping ~3 MiB alive did it once on a CI machine:
 * 41.5 MiB; a router's turns allocate far less, bar one long synchronous task).
 *
 * - A process started with its own semi-space flags (on the command line or in NODE_OPTIONS) is
 *   left to them: `NODE_OPTIONS=--max-semi-space-size=32` restores Node's default.
 * - The growth factor is a process-wide flag, so it caps one thread only: worker threads get a
 *   hard cap from their resource limits instead (panels/worker/thread.ts; V8 makes the limit
 *   semi-spaces of 8 to 11.5 MiB, not exactly 8: test/harness/young-generation.ts), and
 *   with the worker panel the main thread is left uncapped (its toggles would stop the
 *   threads' growth too, wherever they were); it is off the request path there.
 * - Start-up: loading the router's modules grows the new space to 32 MiB in one synchronous
 *   task, before an observer runs, so the CLI holds the growth (`holdYoungGeneration`, in
 *   bin/switchboard.js) until `switchboard start` has started the router and caps it, or until
 *   any other command releases it (cli/index.ts).
 * - `capYoungGeneration` is called by `switchboard start` only (app/start.ts), like
 *   app/runtime/process-policy.ts: a library does not change process-wide V8 flags for its embedder
 *   (STYLE §13b). The worker threads' limit is the worker panel's own, embedded or not.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** MiB per semi-space: the new space is two of them. */
export const YOUNG_SEMI_SPACE_MIB = 8;

const OWN_FLAGS = /--(max|min)-semi-space-size|--semi-space-growth-factor/;

/** True when the process was started with semi-space flags of its own. */
export function hasOwnSemiSpaceFlags(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return execArgv.some((f) => OWN_FLAGS.test(f)) || OWN_FLAGS.test(nodeOptions ?? '');
}

/**
 * The `resourceLimits` of a worker thread: V8's young generation is three semi-spaces (two,
 * and as much again for large objects), so 3 × YOUNG_SEMI_SPACE_MIB; none when the process
 * has semi-space flags of its own (they apply to every thread). Measured, a worker under load
 * reaches semi-spaces of 8 to 11.5 MiB with it (V8's own sizing), against 32 MiB without.
 */
export function workerYoungGenerationLimit(): { maxYoungGenerationSizeMb?: number } {
  if (hasOwnSemiSpaceFlags(process.execArgv, process.env.NODE_OPTIONS)) return {};
  return { maxYoungGenerationSizeMb: 3 * YOUNG_SEMI_SPACE_MIB };
}

/** The new space's size in bytes (both semi-spaces). */
export function newSpaceBytes(): number {
  for (const s of getHeapSpaceStatistics()) if (s.space_name === 'new_space') return s.space_size;
  return 0;
}

/** The growth factor this module last set (V8's default is 2). */
let factor = 2;

function setFactor(wanted: number): void {
  if (wanted === factor) return;
  factor = wanted;
  setFlagsFromString(`--semi-space-growth-factor=${wanted}`);
}

/**
 * Holds the young generation at its initial size (growth factor 1) until `capYoungGeneration`
 * or `releaseYoungGeneration`: the CLI calls it before it loads the router's modules. Loading
 * them is one synchronous task (the sources are read and stripped of their types) that grows the
 * new space to 32 MiB before any `gc` observer could run, and V8 shrinks it again only when
 * allocation is slow, so a cap installed after start-up could stay at twice its size under load.
 * Nothing when the process has semi-space flags of its own.
 */
export function holdYoungGeneration(): void {
  if (!hasOwnSemiSpaceFlags(process.execArgv, process.env.NODE_OPTIONS)) setFactor(1);
}

/** Gives V8 its default growth back (after a hold, for a command or panel that is not capped). */
export function releaseYoungGeneration(): void {
  setFactor(2);
}

/**
 * Starts the cap (nothing when the process has semi-space flags of its own); returns the stop,
 * which gives V8 its default growth back. It cannot shrink a new space already past the cap:
 * call it before the heap grows, or hold the growth until then (`holdYoungGeneration`).
 */
export function capYoungGeneration(semiSpaceMiB = YOUNG_SEMI_SPACE_MIB): () => void {
  if (hasOwnSemiSpaceFlags(process.execArgv, process.env.NODE_OPTIONS)) return () => {};
  const cap = 2 * semiSpaceMiB * 1024 * 1024;
  const check = () => setFactor(newSpaceBytes() >= cap ? 1 : 2);
  const observer = new PerformanceObserver(check);
  observer.observe({ entryTypes: ['gc'] });
  check();
  return () => {
    observer.disconnect();
    releaseYoungGeneration();
  };
}
