/**
 * The shapes the bench harness is built from: a target is a name plus start/stop, a scenario
 * is a name plus how to measure one target once.
 */

/** A started target: where clients connect, and which processes to watch and stop. */
export interface Running {
  readonly port: number;
  /** Root process ids whose process trees make up the target (for RSS). */
  pids(): number[];
  stop(): Promise<void>;
}

/** What every target may need: the backend's port and a scratch directory for configs. */
export interface BenchContext {
  readonly backendPort: number;
  /** The backend's processes (the `direct` target reports their memory). */
  readonly backendPids: readonly number[];
  readonly dir: string;
  /** The backend's HTTP/1.1 port when its main port speaks something else (the h2c backend). */
  readonly backendAltPort?: number;
  /** Extra node flags for Node-based targets (e.g. --cpu-prof). */
  readonly nodeFlags: readonly string[];
  readonly spawn: Spawner;
}

/** A thing to benchmark; `available` says why it is skipped when it cannot run here. */
export interface Target {
  readonly name: string;
  /** Undefined when it can run; otherwise the reason it is skipped. */
  available(): string | undefined;
  start(ctx: BenchContext): Promise<Running>;
  /** The scenarios this target takes part in (undefined: every scenario of its group). */
  readonly scenarios?: readonly string[];
  /** Left out of the default suite; runs when named in --targets or in a suite that lists it. */
  readonly optional?: boolean;
  /**
   * Node event loops that share the load (the worker panel's threads): the warm-up runs this many
   * times as long, so that each loop's code sees as many connections as a one-loop target's.
   */
  readonly loops?: number;
}

/** A backend plus the targets in front of it; a scenario names the group it measures. */
export interface Group {
  readonly name: string;
  /** Undefined when the group's backend can run; otherwise why the group is skipped. */
  available(): string | undefined;
  startBackend(
    dir: string,
    spawn: Spawner,
    prefer?: 'node',
  ): Promise<Running & { readonly kind: string; readonly altPort?: number }>;
  readonly targets: readonly Target[];
  /** The load generator the group's scenarios always use (h2load for h2); absent: the run's (`--loadgen`). */
  readonly loadgen?: string;
}

/** One measured number with its unit; `higherIsBetter` sets the ratio direction. */
export interface Metric {
  readonly value: number;
  readonly unit: string;
  readonly higherIsBetter: boolean;
  /** Secondary numbers shown beside the value (e.g. p50/p99 latency in ms). */
  readonly extra?: Readonly<Record<string, number>>;
}

/** A way of loading a target, measured once per round. */
export interface Scenario {
  readonly name: string;
  readonly title: string;
  /** True when the target must be freshly started for this scenario (memory). */
  readonly fresh: boolean;
  /** Seconds of this scenario run on each target before the rounds (default 1; `--warmup` overrides). */
  readonly warmupSec?: number;
  /** The group whose backend and targets this scenario measures (default `http1`). */
  readonly group?: string;
  /** Undefined when it can run with `loadgen`; otherwise why the scenario is skipped. */
  available?(loadgen: 'wrk' | 'autocannon'): string | undefined;
  measure(target: Running, options: MeasureOptions): Promise<Metric>;
}

/** Knobs shared by every scenario. */
export interface MeasureOptions {
  readonly durationSec: number;
  readonly loadgen: 'wrk' | 'autocannon';
  readonly spawn: Spawner;
  readonly idleConnections: number;
  /** A scratch folder for load-generator logs. */
  readonly dir: string;
}

/** Starts child processes and remembers them so the harness can tear every one down. */
export interface Spawner {
  start(command: string, args: readonly string[], options?: { cwd?: string }): ChildHandle;
  /** Every pid ever spawned (the smoke test checks none is left). */
  readonly spawned: readonly number[];
  stopAll(): Promise<void>;
}

/** A child process started by the Spawner. */
export interface ChildHandle {
  readonly pid: number;
  /** Collected stdout (bounded). */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process exits. */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}
