/**
 * The `worker` panel, main-thread side (the control plane): N worker threads each run an engine
 * panel on their own `reusePort` listeners, while this thread keeps the one address book, the
 * one set of health checks and the one (shared) backend registry. README.md has the steps.
 */

import { SharedAdmission } from '../../src/admission/shared-admission.ts';
import { isSwitchboardError, SwitchboardError } from '../../src/base/errors.ts';
import { type AddressBook, isBackendLister, type RoutingTableSource } from '../../src/contracts/types.ts';
import {
  type DescriptorBudget,
  type EngineFollower,
  hasDescriptorBudget,
  isPanelValidator,
  type PanelValidator,
  type RegistryProvider,
  type SharedPolicyCounting,
} from '../../src/panel/capabilities.ts';
import type { AnyPanelFactory, BoundPanel, Engine, PanelFactory, PanelRuntime } from '../../src/panel/contract.ts';
import { SharedCounters, type SharedCountersState } from '../../src/policy/shared-counters.ts';
import { descriptorsPerConnection } from '../../src/process/nofile.ts';
import { SharedRegistry, sharedRegistryFor, workerThreads } from '../../src/registry/shared.ts';
import { IssuedCertificates, type IssuedUpdate } from '../../src/tls/issued.ts';
import type { TracerCounts } from '../../src/tracing/tracer.ts';
import { type WorkerOptions, workerOptions } from './options.ts';
import type { BookSpec, EngineSpec } from './protocol.ts';
import { checkReusePort } from './support.ts';
import { WorkerThread } from './thread.ts';

/** Restart delays after a crash: from 100 ms, doubling while a worker keeps dying young, ≤ 5 s. */
const RESTART_MIN_MS = 100;
const RESTART_MAX_MS = 5_000;
/** A worker that lived longer than this is considered healthy: its next restart is quick again. */
const HEALTHY_AFTER_MS = 10_000;
/** Time a worker gets beyond drainTimeout to exit before it is terminated. */
const EXIT_GRACE_MS = 5_000;
/**
 * Descriptors a worker thread holds whatever its load, beside one per listener: its event loop's
 * (epoll, eventfds, the message port's), measured at 6 on Node 24 (an idle thread with one
 * listener adds 7 to the process), with 2 to spare.
 */
export const THREAD_DESCRIPTORS = 8;

/** The snapshot of `engine`'s book as plain data (a custom find-only book is rebuilt per worker). */
export function bookSpecOf(engine: Engine): BookSpec {
  const book = engine.book as AddressBook & Partial<RoutingTableSource>;
  const table = typeof book.routingTable === 'function' ? book.routingTable() : undefined;
  if (Array.isArray(table)) return { kind: 'file', entries: table, version: book.version };
  if (table !== undefined && table !== null) return { kind: 'bfe', table, version: book.version };
  const { name } = engine.loaded.config.addressBook;
  return { kind: 'module', name, options: engine.loaded.addressBook.options };
}

/** The state of the shared store `engine`'s policies count in (the main thread compiled them on it). */
function sharedPolicyCounters(engine: Engine): SharedCountersState | undefined {
  const counters = engine.policies.counters;
  return counters instanceof SharedCounters ? counters.state : undefined;
}

class WorkerPanel implements BoundPanel, EngineFollower {
  readonly #entry: URL;
  readonly #runtime: PanelRuntime;
  readonly #threads: number;
  readonly #engine: WorkerOptions['engine'];
  #registry: SharedRegistry | undefined;
  /** The caps, counted once for all threads (each thread admits through a view on it). */
  readonly #admission: SharedAdmission;
  readonly #workers: (WorkerThread | undefined)[] = [];
  readonly #delays: number[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Ports resolved by the first worker for listeners configured with port 0, by name. */
  readonly #ports = new Map<string, number>();
  #spec: EngineSpec | undefined;
  #seq = 0;
  #closing = false;
  /** What run-time certificates the workers hold: a restarted worker starts with all of it. */
  readonly #issued = new IssuedCertificates();

  constructor(entry: URL, runtime: PanelRuntime, options: WorkerOptions) {
    this.#entry = entry;
    this.#runtime = runtime;
    this.#threads = workerThreads(options.threads);
    this.#engine = options.engine;
    this.#admission = SharedAdmission.create(this.#threads);
  }

  async start(): Promise<void> {
    checkReusePort();
    const registry = this.#runtime.registry;
    if (!(registry instanceof SharedRegistry)) {
      throw new SwitchboardError('SWB_ERR_CONFIG', 'panel: worker: the runtime was not created with a shared registry');
    }
    this.#registry = registry;
    this.#spec = this.#specOf(this.#runtime.engine);
    try {
      // The first worker resolves port-0 listeners; the others bind the same ports.
      const first = this.#spawn(0);
      const { addresses } = await first.ready;
      for (const l of this.#spec.config.listeners) {
        const a = addresses[l.name];
        if (l.address.port === 0 && a !== undefined) this.#ports.set(l.name, a.port);
      }
      this.#spec = this.#specOf(this.#runtime.engine);
      const rest = [];
      for (let i = 1; i < this.#threads; i++) rest.push(this.#spawn(i).ready);
      await Promise.all(rest);
    } catch (e) {
      this.destroy();
      if (isSwitchboardError(e) && e.code === 'SWB_ERR_LISTEN') throw e;
      throw new SwitchboardError('SWB_ERR_CONFIG', `panel: worker: ${(e as Error).message}`, { cause: e });
    }
    this.#runtime.logger.info({ threads: this.#threads, engine: this.#engine }, 'worker threads ready');
  }

  /** An ACME certificate or challenge: every live worker applies it before this resolves. */
  async forwardIssued(update: IssuedUpdate): Promise<void> {
    this.#issued.apply(update);
    const seq = ++this.#seq;
    // A worker that dies meanwhile restarts with `#issued` (its init), so only the live ones count.
    await Promise.allSettled(this.#live().map((w) => w.send({ t: 'issued', seq, update })));
  }

  /** Addresses every worker listens on, by listener name (port 0 resolved). */
  addresses(): Record<string, { host: string; port: number }> {
    const out: Record<string, { host: string; port: number }> = {};
    for (const l of this.#spec?.config.listeners ?? []) out[l.name] = { host: l.address.host, port: l.address.port };
    return out;
  }

  /** Open connections by listener, summed over the workers (metrics). */
  connectionsByListener(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const w of this.#live()) for (const [name, n] of Object.entries(w.open)) out[name] = (out[name] ?? 0) + n;
    return out;
  }

  /** The threads' tracer counts (`tracing:`), summed over the live workers as last reported (metrics). */
  threadTracerCounts(): TracerCounts {
    let exported = 0;
    let dropped = 0;
    let failed = 0;
    let queued = 0;
    for (const { tracing: t } of this.#live()) {
      if (t === undefined) continue;
      exported += t.exported;
      dropped += t.dropped;
      failed += t.failed;
      queued += t.queued;
    }
    return { exported, dropped, failed, queued };
  }

  /** The live workers' indexes and the engine versions they serve (tests, admin). */
  workers(): { index: number; version: string; startedAt: number; served: number }[] {
    return this.#live().map((w) => ({ index: w.index, version: w.version, startedAt: w.startedAt, served: w.served }));
  }

  /** Ends worker `index` now, as a crash would (tests: the restart path). */
  kill(index: number): Promise<number> | undefined {
    return this.#workers[index]?.terminate();
  }

  /** Graceful: every worker stops accepting and drains within drainTimeout, then exits. */
  async close(): Promise<void> {
    this.#stop();
    const grace = this.#runtime.engine.limits.drainTimeout + EXIT_GRACE_MS;
    await Promise.all(
      this.#workers.map(async (w) => {
        if (w === undefined || w.dead) return;
        void w.send({ t: 'close' }).catch(() => {});
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([w.exited, new Promise((r) => (timer = setTimeout(r, grace)))]);
        clearTimeout(timer);
        if (!w.dead) await w.terminate();
      }),
    );
  }

  destroy(): void {
    this.#stop();
    for (const w of this.#workers) void w?.terminate();
  }

  #stop(): void {
    this.#closing = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }

  #live(): WorkerThread[] {
    return this.#workers.filter((w): w is WorkerThread => w !== undefined && !w.dead);
  }

  /** What a worker needs to run `engine`, with port-0 listeners pinned to the resolved ports. */
  #specOf(engine: Engine): EngineSpec {
    const { loaded } = engine;
    const listeners = loaded.config.listeners.map((l) => {
      const port = l.address.port === 0 ? this.#ports.get(l.name) : undefined;
      return port === undefined ? l : { ...l, address: { ...l.address, port } };
    });
    return {
      version: engine.version,
      file: loaded.file,
      dir: loaded.dir,
      text: loaded.text,
      config: { ...loaded.config, listeners },
      operator: { name: loaded.config.operator.name, options: loaded.operator.options },
      book: bookSpecOf(engine),
      slots: this.#registry!.slots(),
      policyCounters: sharedPolicyCounters(engine),
    };
  }

  #spawn(index: number): WorkerThread {
    const w = new WorkerThread(
      this.#entry,
      {
        index,
        engine: this.#spec!,
        shared: this.#registry!.shared,
        admission: this.#admission.state,
        logLevel: this.#runtime.logger.level,
        issued: this.#issued.updates(),
      },
      this.#runtime,
      this.#registry!,
    );
    this.#workers[index] = w;
    void w.exited.then((code) => this.#onExit(w, code));
    return w;
  }

  /** A worker ended: take back its connection counts; unless shutting down, start it again. */
  #onExit(w: WorkerThread, code: number): void {
    this.#registry!.forgetWorker(w.index);
    this.#admission.forgetWorker(w.index);
    // Its in-flight holds would stay counted: every count is cleared (relaxed, never stuck).
    const counters = this.#runtime.engine.policies.counters;
    if (counters instanceof SharedCounters) counters.forgetHolds();
    if (this.#closing || this.#workers[w.index] !== w) return;
    const young = Date.now() - w.startedAt < HEALTHY_AFTER_MS;
    const delay = young ? Math.min((this.#delays[w.index] ?? RESTART_MIN_MS / 2) * 2, RESTART_MAX_MS) : RESTART_MIN_MS;
    this.#delays[w.index] = delay;
    this.#runtime.logger.error({ worker: w.index, code, restartInMs: delay }, 'worker thread exited; restarting it');
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (this.#closing) return;
      const next = this.#spawn(w.index);
      next.ready.then(
        () => this.#runtime.logger.info({ worker: w.index }, 'worker thread restarted'),
        (e: unknown) =>
          this.#runtime.logger.error({ worker: w.index, err: (e as Error).message }, 'worker restart failed'),
      );
    }, delay);
    this.#timers.add(timer);
  }

  /**
   * Reload, before the main thread swaps: every live worker builds the new engine and binds new
   * listeners (prepare → ack); if any fails all abort and the reload fails; otherwise all commit
   * and ack, so a reload reported done is served by every worker.
   */
  async prepareEngine(engine: Engine): Promise<void> {
    if (this.#closing) throw new SwitchboardError('SWB_ERR_CONFIG', 'panel: worker: reload: the panel is closing');
    this.#checkNewPorts(engine);
    if (isBackendLister(engine.book)) this.#registry!.reserve(engine.book.listBackends());
    const spec = this.#specOf(engine);
    const seq = ++this.#seq;
    const live = this.#live();
    try {
      await Promise.all(live.map((w) => w.send({ t: 'prepare', seq, engine: spec })));
    } catch (e) {
      for (const w of live) void w.send({ t: 'abort', seq }).catch(() => {});
      throw new SwitchboardError('SWB_ERR_CONFIG', `panel: worker: reload: ${(e as Error).message}`, { cause: e });
    }
    this.#spec = spec;
    const committed = await Promise.allSettled(live.map((w) => w.send({ t: 'commit', seq })));
    for (const r of committed) {
      // A worker that died here is restarted with the new spec.
      if (r.status === 'rejected')
        this.#runtime.logger.warn({ err: (r.reason as Error).message }, 'worker commit lost');
    }
  }

  /** Port 0 is resolved once, at start: a listener added by a reload needs a real port. */
  #checkNewPorts(engine: Engine): void {
    for (const l of engine.loaded.config.listeners) {
      if (l.address.port === 0 && !this.#ports.has(l.name)) {
        throw new SwitchboardError(
          'SWB_ERR_CONFIG',
          `listeners.${l.name}.address: port 0 cannot be added by a reload with panel: worker (each thread would get its own port)`,
        );
      }
    }
  }

  /** The current book swapped its snapshot: push it, with the slot map, to every worker. */
  snapshotChanged(book: AddressBook): void {
    const engine = this.#runtime.engine;
    if (this.#closing || book !== engine.book || this.#spec === undefined) return;
    const spec = bookSpecOf(engine);
    if (spec.kind === 'module') return;
    const slots = this.#registry!.slots();
    if (this.#spec.version === engine.version) this.#spec = { ...this.#spec, book: spec, slots };
    const seq = ++this.#seq;
    for (const w of this.#live()) {
      w.send({ t: 'snapshot', seq, version: engine.version, book: spec, slots }).catch((e: unknown) =>
        this.#runtime.logger.warn({ worker: w.index, err: (e as Error).message }, 'snapshot not acknowledged'),
      );
    }
  }
}

/**
 * The `worker` panel factory. `entry` is the module each thread runs: the composition layer
 * owns it (it builds a runtime and an engine panel inside the thread), so the panel itself
 * imports no address book, operator or composition code. `engines` are the panels a thread may
 * run: what one of them cannot honour, the worker panel cannot either.
 */
export function workerPanel(
  entry: URL,
  engines: Readonly<Record<WorkerOptions['engine'], AnyPanelFactory>>,
): PanelFactory<WorkerOptions> &
  PanelValidator<WorkerOptions> &
  RegistryProvider<WorkerOptions> &
  DescriptorBudget<WorkerOptions> &
  SharedPolicyCounting<WorkerOptions> {
  return {
    name: 'worker',
    options: workerOptions,
    create: (runtime, options) => new WorkerPanel(entry, runtime, options),
    validate(config, options) {
      const engine = engines[options.engine];
      return isPanelValidator(engine) ? engine.validate(config, {}) : [];
    },
    // The threads together hold what their engine holds per connection (caps count once).
    descriptorsPerConnection(config, options) {
      const engine = engines[options.engine];
      return hasDescriptorBudget(engine)
        ? engine.descriptorsPerConnection(config, {})
        : descriptorsPerConnection(config);
    },
    // Each thread holds its own event loop's descriptors and one reusePort socket per listener
    // (measured: 6 + listeners a thread, idle), beyond what the main thread's NOFILE_RESERVE keeps.
    reservedDescriptors: (config, options) =>
      workerThreads(options.threads) * (THREAD_DESCRIPTORS + config.listeners.length),
    // Threads share backend state through one registry in shared memory (src/registry/shared.ts).
    registry: (options) => sharedRegistryFor(options.threads),
    // Policy counters too: a limit of 100/s with 4 threads forwards 100/s (src/policy/shared-counters.ts).
    sharesPolicyCounters: () => true,
  };
}

export type { WorkerPanel };
