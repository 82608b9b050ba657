/**
 * Worker side of the one-destination logs and the aggregated metrics: access records, the
 * diagnostics events metrics count, and connect failures (for the passive health checks that
 * run once, on the main thread) are queued and posted in one message per event-loop turn.
 *
 * Per-request access lines are not queued: the main thread's runtime writes them from the
 * forwarded `requestEnd` event, exactly as it does for a `net` panel, so each line exists once.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { MessagePort } from 'node:worker_threads';
import { channels } from '../../src/base/diagnostics.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import type { ForwardedEvent, FromWorker } from './protocol.ts';

type Forwarded = ForwardedEvent['channel'];

/** What a worker thread reports to the main thread (access records, metric events, connect failures), posted in batches. */
export class ThreadReports {
  readonly #port: MessagePort;
  #access: AccessRecord[] = [];
  #events: ForwardedEvent[] = [];
  #failed: string[] = [];
  #scheduled = false;
  readonly #unsubscribe: (() => void)[] = [];

  /** Access lines are forwarded only when the main thread writes them somewhere. */
  readonly #accessOn: boolean;

  /**
   * `metrics`: the main thread serves `/metrics` (an admin listener), so the events it counts
   * are forwarded; `access`: the access log is on (its lines, per connection or per request,
   * are posted by `accessLog`). Nothing else is subscribed, so a worker with logs off and no admin posts nothing per connection.
   */
  constructor(port: MessagePort, want: { metrics: boolean; access: boolean }) {
    this.#port = port;
    this.#accessOn = want.access;
    if (want.metrics) this.#on('requestEnd', (m) => ({ record: { ...(m as { record: AccessRecord }).record } }));
    if (!want.metrics) return;
    this.#on('connectionEnd', (m) => ({ record: { ...(m as { record: AccessRecord }).record } }));
    this.#on('upstreamConnect', (m) => {
      const e = m as { backend: { id: string }; attempt: number; ok: boolean; latencyMs: number; exhausted?: boolean };
      return {
        backend: { id: e.backend.id },
        attempt: e.attempt,
        ok: e.ok,
        latencyMs: e.latencyMs,
        ...(e.exhausted === true ? { exhausted: true } : {}),
      };
    });
  }

  /** The worker runtime's access log: every line (connection or request) goes to the main thread. */
  readonly accessLog = (record: AccessRecord): void => {
    if (!this.#accessOn) return;
    this.#access.push({ ...record });
    this.#schedule();
  };

  /** A connect failure the main thread's health checks must observe. */
  failed(id: string): void {
    this.#failed.push(id);
    this.#schedule();
  }

  /** Posts whatever is queued now (before the worker exits). */
  flush(): void {
    this.#scheduled = false;
    if (this.#access.length === 0 && this.#events.length === 0 && this.#failed.length === 0) return;
    const message: FromWorker = { t: 'batch', access: this.#access, events: this.#events, failed: this.#failed };
    this.#access = [];
    this.#events = [];
    this.#failed = [];
    this.#port.postMessage(message);
  }

  close(): void {
    this.flush();
    for (const u of this.#unsubscribe.splice(0)) u();
  }

  #on(channel: Forwarded, plain: (message: unknown) => unknown): void {
    const fn = (message: unknown) => {
      this.#events.push({ channel, message: plain(message) });
      this.#schedule();
    };
    const name = channels[channel].name;
    subscribe(name, fn);
    this.#unsubscribe.push(() => unsubscribe(name, fn));
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.flush());
  }
}
