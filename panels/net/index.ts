/**
 * The `net` panel: node:net listeners on one event loop; each connection is peeked, routed and
 * spliced by `handleConnection`. See README.md in this folder.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { ListenerConfig } from '../../src/config/schema.ts';
import { channels } from '../../src/diagnostics.ts';
import { cidrContains, parseCidr } from '../../src/ip.ts';
import type { PanelFactory } from '../../src/panels.ts';
import type { Runtime } from '../../src/runtime.ts';
import type { Panel } from '../../src/types.ts';
import { handleConnection } from './connection.ts';

interface Bound {
  readonly config: ListenerConfig;
  readonly server: Server;
}

/** Whether a socket peer may send a PROXY header on this listener (precomputed per listener). */
function trustCheck(l: ListenerConfig): (ip: string) => boolean {
  const cidrs = l.trustedSources.map((t) => parseCidr(t)).filter((c) => c !== undefined);
  return (ip) => cidrs.some((c) => cidrContains(c, ip));
}

class NetPanel implements Panel {
  readonly #runtime: Runtime;
  readonly #bound: Bound[] = [];
  readonly #sockets = new Set<Socket>();
  #idle: (() => void) | undefined;

  constructor(runtime: Runtime) {
    this.#runtime = runtime;
  }

  /** Addresses actually bound, by listener name (port 0 resolved). */
  addresses(): Record<string, { host: string; port: number }> {
    const out: Record<string, { host: string; port: number }> = {};
    for (const b of this.#bound) {
      const a = b.server.address();
      if (a !== null && typeof a === 'object') out[b.config.name] = { host: a.address, port: a.port };
    }
    return out;
  }

  async start(): Promise<void> {
    const { config } = this.#runtime.engine.loaded;
    try {
      for (const l of config.listeners) this.#bound.push(await this.#listen(l));
    } catch (e) {
      this.destroy();
      throw e;
    }
    for (const [name, a] of Object.entries(this.addresses())) {
      this.#runtime.logger.info({ listener: name, address: `${a.host}:${a.port}` }, 'listening');
    }
  }

  #listen(l: ListenerConfig): Promise<Bound> {
    const trusted = l.proxyProtocol === 'off' ? undefined : trustCheck(l);
    const server = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
      // PROXY listeners: a peer outside trustedSources is closed before a byte is read.
      if (trusted !== undefined && !trusted(socket.remoteAddress ?? '')) this.#reject(socket, l, 'proxy_rejected');
      else this.#accept(socket, l);
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: l.address.host, port: l.address.port, backlog: 4096 }, () => {
        server.removeListener('error', reject);
        server.on('error', (err) =>
          this.#runtime.logger.error({ listener: l.name, err: err.message }, 'listener error'),
        );
        resolve({ config: l, server });
      });
    });
  }

  /** Closes a socket before reading from it, with one access-log line. */
  #reject(socket: Socket, listener: ListenerConfig, result: 'overloaded' | 'proxy_rejected'): void {
    socket.on('error', () => {});
    socket.destroy();
    const record = {
      listener: listener.name,
      client: `${socket.remoteAddress}:${socket.remotePort}`,
      bytesIn: 0,
      bytesOut: 0,
      durationMs: 0,
      result,
    };
    this.#runtime.accessLog(record);
    if (channels.connectionEnd.hasSubscribers) channels.connectionEnd.publish({ record });
  }

  #accept(socket: Socket, listener: ListenerConfig): void {
    const { limits } = this.#runtime.engine;
    if (this.#sockets.size >= limits.maxConnections) {
      this.#reject(socket, listener, 'overloaded');
      return;
    }
    this.#sockets.add(socket);
    if (channels.accept.hasSubscribers) channels.accept.publish({ listener: listener.name, socket });
    handleConnection(socket, listener, this.#runtime, () => {
      this.#sockets.delete(socket);
      if (this.#sockets.size === 0) this.#idle?.();
    }).catch((err: unknown) => {
      // A broken invariant: log loudly, close this connection, keep serving the others.
      this.#runtime.logger.error({ err }, 'connection handler failed');
      socket.destroy();
    });
  }

  /** Open client connections (for drain and metrics). */
  get connections(): number {
    return this.#sockets.size;
  }

  async close(): Promise<void> {
    const closing = this.#bound.map((b) => new Promise<void>((r) => b.server.close(() => r())));
    this.#bound.length = 0;
    const drainTimeout = this.#runtime.engine.limits.drainTimeout;
    if (this.#sockets.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainTimeout);
        this.#idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      for (const s of this.#sockets) s.destroy();
    }
    await Promise.all(closing);
  }

  destroy(): void {
    for (const b of this.#bound) b.server.close();
    this.#bound.length = 0;
    for (const s of this.#sockets) s.destroy();
  }
}

/** The `net` panel factory. */
export const netPanel = {
  name: 'net',
  create: (runtime: Runtime) => new NetPanel(runtime),
} satisfies PanelFactory;

export type { NetPanel };
