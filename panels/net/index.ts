/**
 * The `net` panel: node:net listeners on one event loop; each connection is peeked, routed and
 * spliced by `handleConnection`. Limits (global, per listener, per client, lifetime, half-close)
 * are applied at accept; listeners follow reloads; `close()` drains. See README.md in this folder.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { clientAddressing } from '../../src/client-ip.ts';
import type { Limits, ListenerConfig } from '../../src/config/schema.ts';
import { channels } from '../../src/diagnostics.ts';
import type { PanelRuntime } from '../../src/engine.ts';
import type { PanelFactory } from '../../src/panel.ts';
import type { Panel } from '../../src/types.ts';
import { clientAddress } from './client-address.ts';
import { handleConnection } from './connection.ts';
import { handleTerminated } from './tls-terminate.ts';

/** One bound listener. `config` and `trusted` are replaced when a reload keeps the listener. */
interface Bound {
  config: ListenerConfig;
  trusted: ((ip: string) => boolean) | undefined;
  readonly server: Server;
  /** Open connections accepted here (per-listener maxConnections). */
  open: number;
}

/** Whether a socket peer may send a PROXY header on this listener (precomputed per listener). */
function trustCheck(l: ListenerConfig): ((ip: string) => boolean) | undefined {
  return l.proxyProtocol === 'off' ? undefined : clientAddressing(l).trusted;
}

/** Same name and same address: the listener is kept (its socket stays bound) across a reload. */
/**
 * Whether `l` asks for the socket `b` already has. A listener configured with port 0 is the same
 * socket as a config naming the port it was given: rebinding it would reset the connections
 * waiting in its accept queue.
 */
function sameSocket(b: Bound, l: ListenerConfig): boolean {
  if (b.config.name !== l.name || b.config.address.host !== l.address.host) return false;
  if (b.config.address.port === l.address.port) return true;
  const a = b.server.address();
  return b.config.address.port === 0 && a !== null && typeof a === 'object' && a.port === l.address.port;
}

class NetPanel implements Panel {
  readonly #runtime: PanelRuntime;
  readonly #bound = new Map<string, Bound>();
  readonly #sockets = new Set<Socket>();
  /** Open connections per client IP (the socket peer), only while maxConnectionsPerClient > 0. */
  readonly #perClient = new Map<string, number>();
  #idle: (() => void) | undefined;
  #closing = false;

  constructor(runtime: PanelRuntime) {
    this.#runtime = runtime;
  }

  /** Addresses actually bound, by listener name (port 0 resolved). */
  addresses(): Record<string, { host: string; port: number }> {
    const out: Record<string, { host: string; port: number }> = {};
    for (const [name, b] of this.#bound) {
      const a = b.server.address();
      if (a !== null && typeof a === 'object') out[name] = { host: a.address, port: a.port };
    }
    return out;
  }

  async start(): Promise<void> {
    const { config } = this.#runtime.engine.loaded;
    try {
      for (const l of config.listeners) this.#bound.set(l.name, await this.#listen(l));
    } catch (e) {
      this.destroy();
      throw e;
    }
    for (const [name, a] of Object.entries(this.addresses())) {
      this.#runtime.logger.info({ listener: name, address: `${a.host}:${a.port}` }, 'listening');
    }
  }

  /**
   * Reload step 1: binds the listeners of `listeners` that are new or moved (a failure closes
   * what this call bound and throws). Returns step 2, `commit`, run after the engine swap: it
   * stops accepting on removed and moved listeners (their open connections carry on) and hands
   * kept listeners their new settings. Listeners that did not change are never touched.
   */
  async reconfigure(listeners: readonly ListenerConfig[]): Promise<() => void> {
    const added: Bound[] = [];
    try {
      for (const l of listeners) {
        const b = this.#bound.get(l.name);
        if (b === undefined || !sameSocket(b, l)) added.push(await this.#listen(l));
      }
    } catch (e) {
      for (const b of added) b.server.close();
      throw e;
    }
    return () => {
      const wanted = new Map(listeners.map((l) => [l.name, l]));
      for (const [name, b] of this.#bound) {
        const l = wanted.get(name);
        if (l !== undefined && sameSocket(b, l)) {
          b.config = l;
          b.trusted = trustCheck(l);
          continue;
        }
        b.server.close();
        this.#bound.delete(name);
        this.#runtime.logger.info({ listener: name }, 'listener closed by reload');
      }
      for (const b of added) {
        this.#bound.set(b.config.name, b);
        const a = b.server.address();
        const where = a !== null && typeof a === 'object' ? `${a.address}:${a.port}` : '';
        this.#runtime.logger.info({ listener: b.config.name, address: where }, 'listening');
      }
    };
  }

  #listen(l: ListenerConfig): Promise<Bound> {
    const server = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.#onSocket(socket, bound));
    const bound: Bound = { config: l, trusted: trustCheck(l), server, open: 0 };
    return new Promise((resolve, reject) => {
      const failed = (err: Error) =>
        reject(new Error(`listeners.${l.name}: cannot listen on ${l.address.host}:${l.address.port}: ${err.message}`));
      server.once('error', failed);
      server.listen({ host: l.address.host, port: l.address.port, backlog: 4096 }, () => {
        server.removeListener('error', failed);
        server.on('error', (err) =>
          this.#runtime.logger.error({ listener: bound.config.name, err: err.message }, 'listener error'),
        );
        resolve(bound);
      });
    });
  }

  #onSocket(socket: Socket, b: Bound): void {
    // PROXY listeners: a peer outside trustedSources is closed before a byte is read.
    if (b.trusted !== undefined && !b.trusted(socket.remoteAddress ?? ''))
      this.#reject(socket, b.config, 'proxy_rejected');
    else this.#accept(socket, b);
  }

  /** Closes a socket before reading from it, with one access-log line. */
  #reject(socket: Socket, listener: ListenerConfig, result: 'overloaded' | 'proxy_rejected'): void {
    socket.on('error', () => {});
    socket.destroy();
    const record = {
      listener: listener.name,
      client: clientAddress(socket),
      bytesIn: 0,
      bytesOut: 0,
      durationMs: 0,
      result,
    };
    this.#runtime.accessLog(record);
    if (channels.connectionEnd.hasSubscribers) channels.connectionEnd.publish({ record });
  }

  /** True when accepting one more connection from `ip` on `b` would exceed a limit. */
  #overLimit(limits: Limits, b: Bound, ip: string): boolean {
    if (this.#sockets.size >= limits.maxConnections) return true;
    if (b.config.maxConnections !== undefined && b.open >= b.config.maxConnections) return true;
    return limits.maxConnectionsPerClient > 0 && (this.#perClient.get(ip) ?? 0) >= limits.maxConnectionsPerClient;
  }

  #accept(socket: Socket, b: Bound): void {
    const engine = this.#runtime.engine;
    const { limits } = engine;
    const listener = b.config;
    const ip = socket.remoteAddress ?? '';
    if (this.#closing || this.#overLimit(limits, b, ip)) {
      this.#reject(socket, listener, 'overloaded');
      return;
    }
    this.#sockets.add(socket);
    b.open++;
    const perClient = limits.maxConnectionsPerClient > 0;
    if (perClient) this.#perClient.set(ip, (this.#perClient.get(ip) ?? 0) + 1);
    this.#runtime.hold(engine);
    const clearTimers = this.#connectionTimers(socket, limits);
    if (channels.accept.hasSubscribers) channels.accept.publish({ listener: listener.name, socket });
    // tls: terminate → handshake first, then the same handler on the decrypted stream.
    const handle = listener.tls === 'terminate' ? handleTerminated : handleConnection;
    handle(socket, listener, this.#runtime, () => {
      clearTimers();
      this.#sockets.delete(socket);
      b.open--;
      if (perClient) {
        const n = (this.#perClient.get(ip) ?? 1) - 1;
        if (n > 0) this.#perClient.set(ip, n);
        else this.#perClient.delete(ip);
      }
      this.#runtime.release(engine);
      if (this.#sockets.size === 0) this.#idle?.();
    }).catch((err: unknown) => {
      // A broken invariant: log loudly, close this connection, keep serving the others.
      this.#runtime.logger.error({ err }, 'connection handler failed');
      socket.destroy();
    });
  }

  /**
   * The lifetime and half-close bounds of one client socket. Closing the client is enough: the
   * splice destroys the upstream side with it. Returns the function that clears both timers.
   */
  #connectionTimers(socket: Socket, limits: Limits): () => void {
    let lifetime: NodeJS.Timeout | undefined;
    let halfClose: NodeJS.Timeout | undefined;
    if (limits.maxConnectionLifetime > 0) {
      lifetime = setTimeout(
        () => socket.destroy(new Error('maximum connection lifetime reached')),
        limits.maxConnectionLifetime,
      );
    }
    if (limits.halfCloseTimeout > 0) {
      // Either direction finishing (client FIN read, or our FIN to the client flushed) starts it.
      const arm = () => {
        halfClose ??= setTimeout(() => socket.destroy(new Error('half-close timeout')), limits.halfCloseTimeout);
      };
      socket.once('end', arm);
      socket.once('finish', arm);
    }
    return () => {
      if (lifetime !== undefined) clearTimeout(lifetime);
      if (halfClose !== undefined) clearTimeout(halfClose);
    };
  }

  /** Open client connections (for drain and metrics). */
  get connections(): number {
    return this.#sockets.size;
  }

  /** Open connections by listener name (metrics). */
  connectionsByListener(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, b] of this.#bound) out[name] = b.open;
    return out;
  }

  /**
   * Graceful close: stop accepting, ask drainable connections to stop after their current
   * response, close connections that have not sent a byte yet (idle), give the rest until
   * `limits.drainTimeout`, then close everything.
   */
  async close(): Promise<void> {
    this.#closing = true;
    const closing = [...this.#bound.values()].map((b) => new Promise<void>((r) => b.server.close(() => r())));
    this.#bound.clear();
    this.#runtime.drain.drainAll();
    // Destroyed with an error so that a peek in progress ends at once (it listens for errors).
    for (const s of this.#sockets)
      if (s.bytesRead === 0) s.destroy(new Error('router draining: idle connection closed'));
    const drainTimeout = this.#runtime.engine.limits.drainTimeout;
    if (this.#sockets.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainTimeout);
        this.#idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      for (const s of this.#sockets) s.destroy(new Error('drain timeout'));
    }
    await Promise.all(closing);
  }

  destroy(): void {
    this.#closing = true;
    for (const b of this.#bound.values()) b.server.close();
    this.#bound.clear();
    for (const s of this.#sockets) s.destroy();
  }
}

/** The `net` panel factory. */
export const netPanel = {
  name: 'net',
  create: (runtime: PanelRuntime) => new NetPanel(runtime),
} satisfies PanelFactory;

export type { NetPanel };
