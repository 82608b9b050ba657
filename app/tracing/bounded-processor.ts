/**
 * A span processor with a hard bound: ended spans wait in one queue of at most `queueSize`
 * spans; a full queue drops the span and counts it. One export runs at a time, `batchSize` spans
 * each, when a batch is full or `flushInterval` after the first waiting span; the exporter's own
 * timeout ends a slow one. Nothing here is on a request's path but `onEnd`'s push: an endpoint
 * down or slow costs dropped spans, never a delayed request.
 *
 *   span.end() ─► onEnd ─► queue (≤ queueSize, else dropped++) ─► export(batch ≤ batchSize) ─► exported / failed
 *
 * (The SDK's BatchSpanProcessor is bounded too, but does not say how many it dropped.)
 */
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { TracerStats } from '../../src/tracing/tracer.ts';

/** The bounds of a `BoundedProcessor`. */
export interface ProcessorBounds {
  readonly batchSize: number;
  readonly queueSize: number;
  /** Milliseconds a partial batch waits. */
  readonly flushInterval: number;
  /** Milliseconds `shutdown` spends sending what waits; the rest is dropped (a down endpoint never holds a stop). */
  readonly exportTimeout: number;
}

/** Batches ended spans to `exporter` within `bounds`, counting what it exported, dropped and failed. */
export class BoundedProcessor implements SpanProcessor, TracerStats {
  exported = 0;
  dropped = 0;
  failed = 0;
  readonly #exporter: SpanExporter;
  readonly #bounds: ProcessorBounds;
  #queue: ReadableSpan[] = [];
  #exporting: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #closed = false;

  constructor(exporter: SpanExporter, bounds: ProcessorBounds) {
    this.#exporter = exporter;
    this.#bounds = bounds;
  }

  get queued(): number {
    return this.#queue.length;
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.#closed) return;
    if (this.#queue.length >= this.#bounds.queueSize) {
      this.dropped++;
      return;
    }
    this.#queue.push(span);
    if (this.#exporting !== undefined) return; // the running export sends the rest when it ends
    // A full batch goes on the next turn, not inside this span's end: its serialisation (protobuf
    // or JSON, the bulk of an export's CPU) then never runs within a request's own callback.
    if (this.#queue.length >= this.#bounds.batchSize) this.#immediate ??= setImmediate(this.#sendNow);
    else this.#timer ??= setTimeout(this.#sendNow, this.#bounds.flushInterval).unref();
  }

  readonly #sendNow = (): void => {
    this.#immediate = undefined;
    this.#send();
  };

  /** Sends one batch now (when none is in flight); the rest follows as each export ends. */
  #send(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#exporting !== undefined || this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, this.#bounds.batchSize);
    this.#exporting = new Promise<void>((resolve) => {
      this.#exporter.export(batch, (result) => {
        // ExportResultCode.SUCCESS is 0 (not imported: @opentelemetry/core is not a direct dependency).
        if (result.code === 0) this.exported += batch.length;
        else this.failed += batch.length;
        this.#exporting = undefined;
        resolve();
        if (this.#closed) return;
        if (this.#queue.length >= this.#bounds.batchSize) this.#send();
        else if (this.#queue.length > 0)
          this.#timer ??= setTimeout(() => this.#send(), this.#bounds.flushInterval).unref();
      });
    });
  }

  /** Exports everything waiting (batch after batch). */
  async forceFlush(): Promise<void> {
    for (;;) {
      if (this.#exporting !== undefined) await this.#exporting;
      if (this.#queue.length === 0) return;
      this.#send();
    }
  }

  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#bounds.exportTimeout);
    });
    await Promise.race([this.forceFlush(), late]);
    clearTimeout(timer);
    this.#closed = true;
    this.dropped += this.#queue.length;
    this.#queue = [];
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    await this.#exporter.shutdown();
  }
}
