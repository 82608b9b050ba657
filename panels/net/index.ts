/**
 * The `net` panel: listeners on one event loop; each connection goes through the core's
 * listener pipeline (src/listener/: caps, PROXY header, TLS termination) and is then peeked,
 * routed and spliced by `handleConnection`. Listeners follow reloads; `close()` drains. See
 * README.md in this folder.
 */
import type { ListenerConfig } from '../../src/config/schema.ts';
import type { Panel } from '../../src/contracts/types.ts';
import type { Connection } from '../../src/listener/connection.ts';
import { ListenerPipeline } from '../../src/listener/pipeline.ts';
import type { StreamRouter, StreamRouterFactory } from '../../src/listener/stream-router.ts';
import type { PanelFactory, PanelRuntime } from '../../src/panel/contract.ts';
import { handleConnection } from './connection.ts';

/** The decrypted stream of a terminated connection is peeked as HTTP/1: the one protocol offered. */
const ALPN = ['http/1.1'] as const;

class NetPanel implements Panel {
  readonly #runtime: PanelRuntime;
  readonly #pipeline: ListenerPipeline;
  /** Builds the http2 engine lent by the composition (`h2c: route`); absent: such listeners refuse h2c. */
  readonly #makeStreams: StreamRouterFactory | undefined;
  /** Built at the first h2c connection handed over: a listener without `h2c: route` never pays for it. */
  #streams: StreamRouter | undefined;
  readonly #handOver: ((c: Connection) => void) | undefined;

  constructor(runtime: PanelRuntime, streams: StreamRouterFactory | undefined) {
    this.#runtime = runtime;
    this.#makeStreams = streams;
    this.#handOver = streams === undefined ? undefined : (c) => this.#streamRouter().serve(c);
    this.#pipeline = new ListenerPipeline(runtime, { alpn: ALPN, handle: (c) => this.#handle(c) });
  }

  #handle(c: Connection): void {
    try {
      handleConnection(c, this.#runtime, this.#handOver);
    } catch (err) {
      // A broken invariant: log loudly, close this connection, keep serving the others.
      this.#runtime.logger.error({ err }, 'connection handler failed');
      c.socket.destroy();
      c.raw.destroy();
      c.done();
    }
  }

  #streamRouter(): StreamRouter {
    this.#streams ??= this.#makeStreams!(this.#runtime);
    return this.#streams;
  }

  /** Addresses actually bound, by listener name (port 0 resolved). */
  addresses(): Record<string, { host: string; port: number }> {
    return this.#pipeline.addresses();
  }

  start(): Promise<void> {
    return this.#pipeline.start();
  }

  /** Reload: see ListenerPipeline.reconfigure (bind new/moved listeners, commit after the swap). */
  reconfigure(listeners: readonly ListenerConfig[]): Promise<() => void> {
    return this.#pipeline.reconfigure(listeners);
  }

  /** Open client connections (for drain and metrics). */
  get connections(): number {
    return this.#pipeline.connections;
  }

  /** Open connections by listener name (metrics). */
  connectionsByListener(): Record<string, number> {
    return this.#pipeline.connectionsByListener();
  }

  /**
   * Graceful close: stop accepting, ask drainable connections to stop after their current
   * response, close connections that have not sent a byte yet (idle), give the rest until
   * `limits.drainTimeout`, then close everything.
   */
  async close(): Promise<void> {
    const closing = this.#pipeline.stopAccepting();
    this.#runtime.drain.drainAll();
    this.#streams?.drain();
    // Destroyed with an error so that a peek in progress ends at once (it listens for errors).
    for (const s of this.#pipeline.sockets)
      if (s.bytesRead === 0) s.destroy(new Error('router draining: idle connection closed'));
    if (this.#pipeline.connections > 0) {
      await this.#pipeline.whenIdle(this.#runtime.engine.limits.drainTimeout);
      for (const s of this.#pipeline.sockets) s.destroy(new Error('drain timeout'));
    }
    await closing;
    await this.#streams?.close();
  }

  destroy(): void {
    this.#pipeline.destroy();
    this.#streams?.destroy();
  }
}

/**
 * The `net` panel factory with a stream router for `listeners[].h2c: route` (app/panels.ts gives
 * it the http2 panel's: a panel never imports another panel). Each panel gets its own router.
 */
export function netPanelWith(streams: StreamRouterFactory | undefined) {
  return {
    name: 'net',
    create: (runtime: PanelRuntime) => new NetPanel(runtime, streams),
  } satisfies PanelFactory;
}

/** The `net` panel factory alone: `h2c: route` listeners refuse h2c (GOAWAY HTTP_1_1_REQUIRED). */
export const netPanel = netPanelWith(undefined);

export type { NetPanel };
