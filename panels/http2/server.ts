/**
 * The `http2` panel: terminates HTTP/2 with node:http2 and routes every stream on its own
 * (one connection multiplexes many hosts and paths). See README.md in this folder.
 *
 *   listener pipeline (src/listener/: caps, PROXY header, TLS with ALPN h2 / http/1.1, clientAuth)
 *     │ an accepted, authenticated Connection
 *     ├─ tls: terminate ── ALPN h2 ───────────────► http2 server ─┐
 *     │                 └─ ALPN http/1.1 or none ─► http server  ─┤── 'request' ─► handleStream
 *     └─ plaintext ─ sniffPreface ─┬─ h2c ────────► http2 server ─┤   (listeners[].h2c: refuse →
 *                                  └─ http/1.1 ───► http server  ─┘    GOAWAY HTTP_1_1_REQUIRED)
 *
 * 1. The servers never listen: the pipeline hands them sockets with `emit('connection')`.
 *    One pair per listener config (a reload's new config gets new servers; open sessions stay
 *    on theirs), built with the limits of the engine in use: `maxConcurrentStreams` and the
 *    header list size are advertised in SETTINGS; an h2 header list over `maxHeaderBytes` is
 *    answered 431 (to-request.ts), an HTTP/1.1 head over it gets 431 from node's parser.
 * 2. Sessions idle for `idleTimeout` are closed (GOAWAY); HTTP/1 sockets time out likewise.
 * 3. `close`: stop accepting, GOAWAY every client session, let streams finish within
 *    `drainTimeout`, then close the upstream pools; `destroy` closes everything now.
 */

import { SwitchboardError } from '../../src/base/errors.ts';
import type { ListenerConfig } from '../../src/config/schema.ts';
import { ListenerPipeline } from '../../src/listener/pipeline.ts';
import type { StreamRouterFactory } from '../../src/listener/stream-router.ts';
import type { BoundPanel, PanelFactory, PanelRuntime } from '../../src/panel/contract.ts';
import { StreamServers } from './streams.ts';

/** What a terminating listener offers, in preference order. */
const ALPN = ['h2', 'http/1.1'] as const;

class Http2Panel implements BoundPanel {
  readonly #runtime: PanelRuntime;
  readonly #pipeline: ListenerPipeline;
  /** Servers, sessions, deadlines and upstream pools (streams.ts): everything but the listeners. */
  readonly #streams: StreamServers;

  constructor(runtime: PanelRuntime) {
    this.#runtime = runtime;
    this.#streams = new StreamServers(runtime);
    this.#pipeline = new ListenerPipeline(runtime, { alpn: ALPN, handle: (c) => this.#streams.serve(c) });
  }

  /** Addresses actually bound, by listener name (port 0 resolved). */
  addresses(): Record<string, { host: string; port: number }> {
    return this.#pipeline.addresses();
  }

  async start(): Promise<void> {
    checkListeners(this.#runtime.engine.loaded.config.listeners);
    await this.#pipeline.start({ panel: 'http2' });
  }

  /** Reload: listeners added, moved or removed; new connections get the new certificates. */
  reconfigure(listeners: readonly ListenerConfig[]): Promise<() => void> {
    checkListeners(listeners);
    return this.#pipeline.reconfigure(listeners);
  }

  /** Open connections by listener name (metrics). */
  connectionsByListener(): Record<string, number> {
    return this.#pipeline.connectionsByListener();
  }

  /** Open client connections. */
  get connections(): number {
    return this.#pipeline.connections;
  }

  async close(): Promise<void> {
    const closing = this.#pipeline.stopAccepting();
    this.#streams.drain();
    if (this.#pipeline.connections > 0) {
      // HTTP/1 keep-alive sockets become idle as their requests finish: close them as they do.
      const sweep = setInterval(() => this.#streams.sweepIdle(), 50);
      await this.#pipeline.whenIdle(this.#runtime.engine.limits.drainTimeout);
      clearInterval(sweep);
      for (const s of this.#pipeline.sockets) s.destroy();
    }
    await closing;
    await this.#streams.close();
  }

  destroy(): void {
    this.#pipeline.destroy();
    this.#streams.destroy();
  }
}

/** TLS passthrough splices ClientHellos: a `net` panel job (the http2 panel terminates HTTP/2). */
function checkListeners(listeners: readonly ListenerConfig[]): void {
  for (const l of listeners) {
    if (l.tls === 'passthrough') {
      throw new SwitchboardError(
        'SWB_ERR_CONFIG',
        `listeners.${l.name}.tls: passthrough is served by the net panel, not http2`,
      );
    }
  }
}

/** The `http2` panel factory. */
export const http2Panel = {
  name: 'http2',
  create: (runtime: PanelRuntime) => new Http2Panel(runtime),
} satisfies PanelFactory;

/**
 * The http2 panel's engine for a splicing panel (`listeners[].h2c: route` on the net panel):
 * the same servers and upstream pools, fed the connections that panel hands over.
 */
export const h2cStreamRouter: StreamRouterFactory = (runtime) => new StreamServers(runtime);

export type { Http2Panel };
