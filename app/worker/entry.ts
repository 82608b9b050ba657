/**
 * A worker thread of the `worker` panel (the data plane): builds a runtime whose address book is
 * the main thread's snapshot and whose registry is a view on the shared buffers, runs the real
 * engine panel (`net` or `http2`) on its own listeners, bound with the runtime's `reusePort`
 * option, counting connections in the panel's shared admission buffer, and answers the main
 * thread's messages (panels/worker/README.md, steps 2–5; app/worker/README.md).
 */

import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { engineOf } from '../../panels/worker/options.ts';
import type { BookSpec, EngineSpec, FromWorker, ToWorker, WorkerInit } from '../../panels/worker/protocol.ts';
import { ThreadReports } from '../../panels/worker/thread-reports.ts';
import { SharedAdmission } from '../../src/admission/shared-admission.ts';
import { isSwitchboardError, SwitchboardError } from '../../src/base/errors.ts';
import { configureLogger, createLogger } from '../../src/base/log.ts';
import type { AddressBookFactory } from '../../src/contracts/plugin.ts';
import { countsListeners, isReconfigurable } from '../../src/panel/capabilities.ts';
import type { BoundPanel, LoadedConfig } from '../../src/panel/contract.ts';
import { SharedRegistry } from '../../src/registry/shared.ts';
import { tracerCounts } from '../../src/tracing/tracer.ts';
import { enginePanels } from '../plugins/engine-panels.ts';
import { resolveAddressBook, resolveOperator, resolvePolicies } from '../plugins/resolve.ts';
import { attachedCounting } from '../runtime/engine-policies.ts';
import { installProcessPolicy } from '../runtime/process-policy.ts';
import { Runtime } from '../runtime/runtime.ts';
import { startTracingPart } from '../tracing/part.ts';
import type { RunningTracing } from '../tracing/start.ts';
import { findOnly, type SnapshotBook, snapshotBookFactory } from './book.ts';

const STATS_MS = 100;

/** The worker loop: one runtime, one engine panel, and the main thread's port. */
class WorkerLoop {
  readonly #port: MessagePort;
  readonly #init: WorkerInit;
  readonly #reports: ThreadReports;
  readonly #registry: SharedRegistry;
  /** Snapshot books by main engine version (the current engine and one being prepared). */
  readonly #books = new Map<string, SnapshotBook>();
  /** The newest snapshot per engine version, applied when its book is created late. */
  readonly #latest = new Map<string, BookSpec>();
  /** Decisions awaited by a prepared reload: commit (true) or abort (false). */
  readonly #decisions = new Map<number, (go: boolean) => void>();
  #runtime: Runtime | undefined;
  #panel: BoundPanel | undefined;
  /** This thread's tracer (`tracing:`): each thread exports its own spans, with the same bounds. */
  #tracing: RunningTracing | undefined;
  /** The shared policy counters of the engine being built (its spec's; the main thread sized them). */
  #policyCounters: EngineSpec['policyCounters'];
  #version: string;
  #stats = '';
  #statsTimer: NodeJS.Timeout | undefined;

  constructor(port: MessagePort, init: WorkerInit) {
    this.#port = port;
    this.#init = init;
    this.#version = init.engine.version;
    this.#policyCounters = init.engine.policyCounters;
    const { config } = init.engine;
    this.#reports = new ThreadReports(port, {
      metrics: config.admin !== undefined,
      access: config.log.access !== 'off',
    });
    this.#registry = SharedRegistry.view(init.shared, init.index, {
      onConnectFailed: (id) => this.#reports.failed(id),
    });
    this.#registry.adopt(init.engine.slots);
  }

  async start(): Promise<void> {
    const spec = this.#init.engine;
    const runtime = await Runtime.create(await this.#loaded(spec), {
      registry: this.#registry,
      accessLog: this.#reports.accessLog,
      // The thread formats its own lines (log.format; `auto` checks fd 2) and tags them `thread`.
      logger: createLogger(this.#init.logLevel, undefined, {
        format: spec.config.log.format,
        thread: this.#init.index,
      }),
      // Caps counted once for the process; every thread binds the same addresses (SO_REUSEPORT).
      admission: SharedAdmission.view(this.#init.admission, this.#init.index),
      reusePort: true,
      // Policy counts are process-wide: every engine compiles on the store its spec names.
      policyCounting: attachedCounting(() => this.#policyCounters),
    });
    this.#runtime = runtime;
    for (const u of this.#init.issued) runtime.issued.apply(u);
    // A rejection no connection caught is logged and the thread serves on (app/runtime/process-policy.ts).
    installProcessPolicy(runtime.logger);
    this.#tracing = await startTracingPart(spec.config.tracing);
    const engine = enginePanels[engineOf(spec.config.panel)];
    const panel = engine.create(runtime, {});
    await panel.start();
    this.#panel = panel;
    this.#port.on('message', (m: ToWorker) => this.#onMessage(m));
    this.#statsTimer = setInterval(() => this.#postStats(), STATS_MS);
    this.#statsTimer.unref();
    this.#post({ t: 'ready', addresses: panel.addresses(), version: this.#version });
  }

  /** The LoadedConfig of `spec` with the snapshot book (or the custom book, find-only). */
  async #loaded(spec: EngineSpec): Promise<LoadedConfig> {
    const operator = await resolveOperator(spec.operator.name, spec.dir);
    let factory: AddressBookFactory;
    let options: unknown = spec.book;
    if (spec.book.kind === 'module') {
      const custom = await resolveAddressBook(spec.book.name, spec.dir);
      factory = { name: custom.name, create: (o, ctx) => findOnly(custom.create(o, ctx)) };
      options = spec.book.options;
    } else {
      factory = snapshotBookFactory((book) => {
        this.#books.set(spec.version, book);
        const late = this.#latest.get(spec.version);
        if (late !== undefined) book.apply(late);
      });
    }
    const errors: string[] = [];
    const policies = await resolvePolicies(spec.config.policies, spec.dir, errors);
    if (errors.length > 0) throw new SwitchboardError('SWB_ERR_PLUGIN', errors.join('; '));
    return {
      file: spec.file,
      dir: spec.dir,
      text: spec.text,
      config: spec.config,
      policies,
      // The thread runs the engine panel; the worker panel itself lives on the main thread.
      panel: { factory: enginePanels[engineOf(spec.config.panel)], options: {} },
      operator: { factory: operator, options: spec.operator.options },
      addressBook: { factory, options },
    };
  }

  #onMessage(m: ToWorker): void {
    switch (m.t) {
      case 'snapshot':
        this.#registry.adopt(m.slots);
        this.#latest.set(m.version, m.book);
        this.#books.get(m.version)?.apply(m.book);
        this.#post({ t: 'ack', seq: m.seq, version: this.#version });
        return;
      case 'prepare':
        void this.#prepare(m.seq, m.engine);
        return;
      case 'issued':
        try {
          this.#runtime?.issued.apply(m.update);
          this.#post({ t: 'ack', seq: m.seq, version: this.#version });
        } catch (e) {
          this.#post({ t: 'nack', seq: m.seq, error: (e as Error).message });
        }
        return;
      case 'commit':
      case 'abort':
        this.#decisions.get(m.seq)?.(m.t === 'commit');
        this.#decisions.delete(m.seq);
        return;
      case 'close':
        void this.#close();
        return;
    }
  }

  /** Reload: build the engine and bind new listeners, ack, then swap on commit (or drop on abort). */
  async #prepare(seq: number, spec: EngineSpec): Promise<void> {
    const runtime = this.#runtime!;
    const panel = this.#panel!;
    let acked = false;
    try {
      const loaded = await this.#loaded(spec);
      this.#policyCounters = spec.policyCounters;
      await runtime.reload(loaded, async () => {
        const listeners = isReconfigurable(panel) ? await panel.reconfigure(spec.config.listeners) : undefined;
        this.#registry.adopt(spec.slots);
        const decided = new Promise<boolean>((resolve) => this.#decisions.set(seq, resolve));
        acked = true;
        this.#post({ t: 'ack', seq, version: this.#version });
        if (!(await decided)) throw new SwitchboardError('SWB_ERR_RELOAD_ABORTED', 'reload aborted by the main thread');
        return () => {
          listeners?.();
          configureLogger(runtime.logger, spec.config.log);
          this.#version = spec.version;
          for (const v of [...this.#books.keys()]) if (v !== spec.version) this.#books.delete(v);
          for (const v of [...this.#latest.keys()]) if (v !== spec.version) this.#latest.delete(v);
        };
      });
      this.#post({ t: 'ack', seq, version: this.#version });
    } catch (e) {
      if (!acked) this.#post({ t: 'nack', seq, error: (e as Error).message });
      this.#books.delete(spec.version);
    }
  }

  #postStats(): void {
    const panel = this.#panel;
    const open = panel !== undefined && countsListeners(panel) ? panel.connectionsByListener() : {};
    // This thread's span counts (tracing:) ride along: the main thread sums them on /metrics.
    const tracing = this.#tracing === undefined ? undefined : tracerCounts(this.#tracing.stats);
    const text = JSON.stringify([open, tracing]);
    if (text === this.#stats) return;
    this.#stats = text;
    this.#post(tracing === undefined ? { t: 'stats', open } : { t: 'stats', open, tracing });
  }

  /** Graceful: the engine panel drains within drainTimeout, then the runtime closes. */
  async #close(): Promise<void> {
    if (this.#statsTimer !== undefined) clearInterval(this.#statsTimer);
    await this.#panel?.close();
    await this.#tracing?.close();
    this.#postStats();
    await this.#runtime?.close();
    this.#reports.close();
    this.#post({ t: 'closed' });
    // Messages posted before exit are delivered; handles a plugin left open must not keep us.
    setImmediate(() => process.exit(0));
  }

  #post(m: FromWorker): void {
    this.#port.postMessage(m);
  }
}

if (parentPort !== null) {
  const port = parentPort;
  const loop = new WorkerLoop(port, workerData as WorkerInit);
  loop.start().catch((e: unknown) => {
    const code = isSwitchboardError(e) ? e.code : undefined;
    port.postMessage({
      t: 'fatal',
      error: (e as Error).message ?? String(e),
      ...(code !== undefined ? { code } : {}),
    } satisfies FromWorker);
    process.exitCode = 1;
    port.close();
  });
}
