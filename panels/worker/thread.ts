/**
 * The main thread's handle on one worker thread: spawns it, routes its messages (access lines to
 * the one access log, forwarded events to the main thread's diagnostics channels, connect
 * failures to the owner registry's observers), and turns acks into promises. A worker's error or
 * exit never throws here: it is reported to `onExit` and logged.
 */
import { Worker } from 'node:worker_threads';
import { channels } from '../../src/base/diagnostics.ts';
import { SwitchboardError } from '../../src/base/errors.ts';
import type { PanelRuntime } from '../../src/panel/contract.ts';
import { keepWasmWrappersGeneric } from '../../src/process/wasm-wrappers.ts';
import { workerYoungGenerationLimit } from '../../src/process/young-generation.ts';
import type { SharedRegistry } from '../../src/registry/shared.ts';
import type { TracerCounts } from '../../src/tracing/tracer.ts';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.ts';

/** A thread's start failure; a bind failure keeps its code and config path (one CLI line, exit 1). */
function fatalError(index: number, error: string, code: string | undefined): Error {
  if (code === 'SWB_ERR_LISTEN') return new SwitchboardError(code, `${error} (worker ${index})`);
  return new Error(`worker ${index}: ${error}`);
}

/** What a worker reported when it was ready. */
export interface Ready {
  readonly addresses: Record<string, { host: string; port: number }>;
  readonly version: string;
}

/** One worker thread as the main thread sees it. */
export class WorkerThread {
  readonly index: number;
  readonly startedAt = Date.now();
  /** Open connections by listener, as last reported. */
  open: Record<string, number> = {};
  /** This thread's tracer counts, as last reported (with `tracing:`). */
  tracing: TracerCounts | undefined = undefined;
  /** Client connections this worker has finished (its access lines). */
  served = 0;
  /** The engine version this worker serves (from its last ack). */
  version: string;
  readonly ready: Promise<Ready>;
  readonly exited: Promise<number>;
  readonly #worker: Worker;
  readonly #runtime: PanelRuntime;
  readonly #registry: SharedRegistry;
  readonly #waiters = new Map<number, { resolve: (v: string) => void; reject: (e: Error) => void }>();
  #exited = false;

  /** `entry` is the module a thread runs (the composition layer's worker loop). */
  constructor(entry: URL, init: WorkerInit, runtime: PanelRuntime, registry: SharedRegistry) {
    this.index = init.index;
    this.version = init.engine.version;
    this.#runtime = runtime;
    this.#registry = registry;
    keepWasmWrappersGeneric(); // before the thread's isolate loads its modules (src/process/wasm-wrappers.ts)
    // A young generation of 8 MiB semi-spaces, as the main thread's (src/process/young-generation.ts).
    this.#worker = new Worker(entry, {
      workerData: init,
      name: `switchboard-worker-${init.index}`,
      resourceLimits: workerYoungGenerationLimit(),
    });
    let ready: (r: Ready) => void;
    let failed: (e: Error) => void;
    this.ready = new Promise<Ready>((resolve, reject) => {
      ready = resolve;
      failed = reject;
    });
    this.ready.catch(() => {});
    this.#worker.on('message', (m: FromWorker) => {
      if (m.t === 'ready') ready({ addresses: m.addresses, version: m.version });
      else if (m.t === 'fatal') failed(fatalError(this.index, m.error, m.code));
      else this.#onMessage(m);
    });
    this.#worker.on('error', (err) => {
      runtime.logger.error({ worker: this.index, err: err.message }, 'worker thread failed');
      failed(new Error(`worker ${this.index}: ${err.message}`));
    });
    this.#worker.on('messageerror', (err) =>
      runtime.logger.error({ worker: this.index, err: err.message }, 'worker message could not be read'),
    );
    this.exited = new Promise<number>((resolve) =>
      this.#worker.once('exit', (code) => {
        this.#exited = true;
        failed(new Error(`worker ${this.index}: exited (${code}) before it was ready`));
        for (const w of this.#waiters.values()) w.reject(new Error(`worker ${this.index} exited`));
        this.#waiters.clear();
        resolve(code);
      }),
    );
  }

  /** True once the thread has ended. */
  get dead(): boolean {
    return this.#exited;
  }

  /** Sends `m`; with a `seq`, resolves with the version of the worker's ack (rejects on nack or exit). */
  send(m: ToWorker): Promise<string> {
    if (this.#exited) return Promise.reject(new Error(`worker ${this.index} is not running`));
    const seq = m.t === 'close' || m.t === 'abort' ? undefined : m.seq;
    const acked =
      seq === undefined
        ? Promise.resolve('')
        : new Promise<string>((resolve, reject) => this.#waiters.set(seq, { resolve, reject }));
    this.#worker.postMessage(m);
    return acked;
  }

  /** Ends the thread now. */
  terminate(): Promise<number> {
    return this.#worker.terminate();
  }

  #onMessage(m: FromWorker): void {
    switch (m.t) {
      case 'batch':
        this.served += m.access.length;
        for (const r of m.access) this.#runtime.accessLog(r);
        for (const e of m.events) {
          const ch = channels[e.channel];
          if (ch.hasSubscribers) ch.publish(e.message);
        }
        for (const id of m.failed) this.#registry.noteConnectFailed(id);
        return;
      case 'stats':
        this.open = m.open;
        if (m.tracing !== undefined) this.tracing = m.tracing;
        return;
      case 'ack': {
        this.version = m.version;
        const w = this.#waiters.get(m.seq);
        this.#waiters.delete(m.seq);
        w?.resolve(m.version);
        return;
      }
      case 'nack': {
        const w = this.#waiters.get(m.seq);
        this.#waiters.delete(m.seq);
        w?.reject(new Error(`worker ${this.index}: ${m.error}`));
        return;
      }
      default:
        return;
    }
  }
}
