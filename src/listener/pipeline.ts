/**
 * The listener pipeline (README.md in this folder): binds a panel's listeners, follows reloads,
 * and takes every accepted socket through the steps every panel shares, then hands it to the
 * panel's protocol handler:
 *
 *   accept → trustedSources → caps (admission) → PROXY header in → connection policies
 *     → TLS termination → handler
 *
 * Each step ends a refused connection with one access line and gives its admission slot back
 * exactly once (Connection.done). The hot path is callbacks on one Connection object: no
 * promise, and no closure per connection unless a PROXY header is expected.
 */
import type { Server, Socket } from 'node:net';
import { REFUSED } from '../admission/admission.ts';
import { arm, Deadline, disarm } from '../base/deadline.ts';
import { channels } from '../base/diagnostics.ts';
import type { AccessRecord } from '../base/log.ts';
import { MemberList } from '../base/member-list.ts';
import type { ListenerConfig } from '../config/schema.ts';
import { logConnection, millisSince } from '../data-path/access-record.ts';
import type { PanelRuntime } from '../panel/contract.ts';
import { bindListener, boundAddress } from './bind.ts';
import { clientAddress, clientText, readPeer } from './client-address.ts';
import { clientKey } from './client-key.ts';
import { Connection, type PipelineSteps } from './connection.ts';
import { connectionFinished, connectionStep, handshakeStep } from './policy-steps.ts';
import { readProxyHeader } from './proxy-in.ts';
import { sameSocket, trustCheck } from './same-socket.ts';
import { TlsStep } from './tls-step.ts';

/** What a panel gives the pipeline. */
export interface PipelineOptions {
  /** ALPN protocols a `tls: terminate` listener offers, in preference order. */
  readonly alpn: readonly string[];
  /** The panel's protocol handling; it calls `c.done()` once the connection has fully closed. */
  readonly handle: (c: Connection) => void;
}

/** One bound listener. `config`, `trusted` are replaced when a reload keeps the listener. */
interface Bound {
  config: ListenerConfig;
  trusted: ((ip: string) => boolean) | undefined;
  readonly server: Server;
  /** Open connections accepted here (metrics). */
  open: number;
  /** The listener's admission counter. */
  readonly slot: number;
}

const kConnection = Symbol('switchboard.connection');
type Tagged = Socket & { [kConnection]?: Connection };

/** The pipeline connection a socket handed to a handler belongs to (raw or TLS socket). */
export function connectionOf(socket: object): Connection | undefined {
  return (socket as Tagged)[kConnection];
}

/**
 * The access log's `client` of a socket the pipeline handed on (raw or TLS): its connection's
 * peer as read at accept, so it is known after the socket has closed too.
 */
export function clientOf(socket: Socket): string {
  const c = connectionOf(socket);
  return c === undefined ? clientAddress(socket) : clientText(c.ip, c.port);
}

const noop = () => {};

function destroyForLifetime(socket: Socket): void {
  socket.destroy(new Error('maximum connection lifetime reached'));
}

function destroyForHalfClose(socket: Socket): void {
  socket.destroy(new Error('half-close timeout'));
}

/** Either direction finishing (client FIN read, or our FIN flushed) starts the half-close bound. */
function armHalfClose(this: Socket): void {
  const c = (this as Tagged)[kConnection];
  if (c === undefined || c.halfClose !== undefined) return;
  c.halfClose = new Deadline(destroyForHalfClose, this);
  arm(c.halfClose, c.engine.limits.halfCloseTimeout);
}

/** The listener pipeline of one panel instance. */
export class ListenerPipeline implements PipelineSteps {
  readonly #runtime: PanelRuntime;
  readonly #options: PipelineOptions;
  readonly #bound = new Map<string, Bound>();
  /** The raw sockets of the open connections (a list, not a Set: src/base/member-list.ts says why). */
  readonly #open = new MemberList<Socket>();
  /** Step 4: TLS termination (and TLS-ALPN-01 challenges). */
  readonly #tls: TlsStep;
  #idle: (() => void) | undefined;
  #closing = false;

  constructor(runtime: PanelRuntime, options: PipelineOptions) {
    this.#runtime = runtime;
    this.#options = options;
    this.#tls = new TlsStep(options.alpn, this);
  }

  /** Addresses actually bound, by listener name (port 0 resolved). */
  addresses(): Record<string, { host: string; port: number }> {
    const out: Record<string, { host: string; port: number }> = {};
    for (const [name, b] of this.#bound) {
      const a = boundAddress(b.server);
      if (a !== undefined) out[name] = a;
    }
    return out;
  }

  /** Open connections by listener name (metrics). */
  connectionsByListener(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, b] of this.#bound) out[name] = b.open;
    return out;
  }

  /** Open client connections of this panel (drain, metrics). */
  get connections(): number {
    return this.#open.size;
  }

  /** The raw sockets of the open connections (a copy). */
  get sockets(): readonly Socket[] {
    return this.#open.values();
  }

  /** Binds every listener of the current engine; on a failure closes what it bound and throws. */
  async start(extra: Record<string, unknown> = {}): Promise<void> {
    try {
      for (const [i, l] of this.#runtime.engine.loaded.config.listeners.entries())
        this.#bound.set(l.name, await this.#listen(l, i));
    } catch (e) {
      this.destroy();
      throw e;
    }
    for (const [name, a] of Object.entries(this.addresses())) {
      this.#runtime.logger.info({ listener: name, address: `${a.host}:${a.port}`, ...extra }, 'listening');
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
      for (const [i, l] of listeners.entries()) {
        const b = this.#bound.get(l.name);
        if (b === undefined || !sameSocket(b.config, b.server, l)) added.push(await this.#listen(l, i));
      }
    } catch (e) {
      for (const b of added) b.server.close();
      throw e;
    }
    return () => {
      const wanted = new Map(listeners.map((l) => [l.name, l]));
      for (const [name, b] of this.#bound) {
        const l = wanted.get(name);
        if (l !== undefined && sameSocket(b.config, b.server, l)) {
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
        const a = boundAddress(b.server);
        this.#runtime.logger.info(
          { listener: b.config.name, address: a === undefined ? '' : `${a.host}:${a.port}` },
          'listening',
        );
      }
    };
  }

  /** Stops accepting (new sockets are refused); resolves once every listener has closed. */
  stopAccepting(): Promise<void> {
    this.#closing = true;
    const closing = [...this.#bound.values()].map((b) => new Promise<void>((r) => b.server.close(() => r())));
    this.#bound.clear();
    return Promise.all(closing).then(noop);
  }

  /** Resolves when no connection is open any more, or after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<void> {
    if (this.#open.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Closes every listener and every connection now. */
  destroy(): void {
    this.#closing = true;
    for (const b of this.#bound.values()) b.server.close();
    this.#bound.clear();
    for (const s of this.#open.values()) s.destroy();
  }

  async #listen(l: ListenerConfig, index: number): Promise<Bound> {
    const runtime = this.#runtime;
    const b: Partial<Bound> & { config: ListenerConfig } = { config: l };
    const server = await bindListener(l, (socket) => this.#onSocket(socket, b as Bound), {
      reusePort: runtime.reusePort,
      logger: runtime.logger,
      where: `listeners[${index}].address`,
    });
    return Object.assign(b, { trusted: trustCheck(l), server, open: 0, slot: runtime.admission.listener(l.name) });
  }

  /** Step 1 and 2: trusted sources, then the caps; both close before a byte is read. */
  #onSocket(socket: Socket, b: Bound): void {
    socket.on('error', noop);
    const peer = readPeer(socket);
    const ip = peer.address ?? '';
    const port = peer.port ?? 0;
    if (b.trusted !== undefined && !b.trusted(ip)) {
      this.#reject(socket, b.config, 'proxy_rejected', clientText(ip, port));
      return;
    }
    const runtime = this.#runtime;
    const engine = runtime.engine;
    const { limits } = engine;
    const key = limits.maxConnectionsPerClient > 0 ? clientKey(ip, limits.clientIpv6Prefix) : ip;
    // On a PROXY listener the peer is the balancer: the client's place is taken after the header.
    const counted = b.config.proxyProtocol === 'off' ? key : undefined;
    const handle = this.#closing ? REFUSED : runtime.admission.admit(b.slot, counted, limits, b.config.maxConnections);
    if (handle === REFUSED) {
      this.#reject(socket, b.config, 'overloaded', clientText(ip, port));
      return;
    }
    b.open++;
    runtime.hold(engine);
    const c = new Connection(this, socket, b.config, b, engine, ip, port, b.slot, handle, key);
    c.member = this.#open.add(socket);
    (socket as Tagged)[kConnection] = c;
    if (limits.maxConnectionLifetime > 0) {
      c.lifetime = new Deadline(destroyForLifetime, socket);
      arm(c.lifetime, limits.maxConnectionLifetime);
    }
    if (limits.halfCloseTimeout > 0) {
      // 'end' and 'finish' come at most once each: `on` spares two `once` wrappers per connection.
      socket.on('end', armHalfClose);
      socket.on('finish', armHalfClose);
    }
    if (channels.accept.hasSubscribers) channels.accept.publish({ listener: b.config.name, socket });
    const accept = b.config.proxyProtocol;
    if (accept !== 'off') readProxyHeader(socket, accept, c.remaining(), c);
    else this.afterProxy(c);
  }

  /** Step 3c, the `connection` policies, then step 4: TLS termination on `tls: terminate` listeners. */
  afterProxy(c: Connection): void {
    if (c.proxy !== undefined && c.engine.limits.maxConnectionsPerClient > 0 && !this.#admitProxied(c)) return;
    // No rule at the point: one length check, nothing made.
    const policies = c.engine.policies;
    if (policies.has('connection') && !connectionStep(c, policies, this, this.#runtime.logger)) return;
    if (c.listener.tls !== 'terminate') {
      this.#options.handle(c);
      return;
    }
    const tls = c.engine.tls.listeners.get(c.listener.name);
    if (tls === undefined) {
      // The listener was bound as terminating but this engine has no certificates for it.
      this.refused(c, 'bad_request', 'tls handshake: no certificates for this listener', 'tls');
      return;
    }
    this.#tls.run(c, tls);
  }

  /**
   * Step 3b, PROXY listeners with limits.maxConnectionsPerClient: the client's place, keyed by
   * the PROXY source. A LOCAL (or UNKNOWN) header is the balancer's own connection (its health
   * checks): counted only by the global and listener caps, as it was while the header was read.
   */
  #admitProxied(c: Connection): boolean {
    const source = c.proxy?.command === 'proxy' ? c.proxy.source : undefined;
    if (source === undefined) return true;
    const { limits } = c.engine;
    const key = clientKey(source.ip, limits.clientIpv6Prefix);
    const handle = this.#runtime.admission.client(key, limits);
    if (handle === REFUSED) {
      const reason = `limits.maxConnectionsPerClient ${limits.maxConnectionsPerClient} reached for ${key}`;
      this.refused(c, 'overloaded', reason, undefined, clientText(source.ip, source.port));
      return false;
    }
    c.key = key;
    c.handle = handle;
    return true;
  }

  /** Step 4b, the `handshake` policies of a terminating listener, then step 5: the panel's protocol handling, on the decrypted stream. */
  afterTls(c: Connection): void {
    (c.socket as Tagged)[kConnection] = c;
    const policies = c.engine.policies;
    if (policies.has('handshake') && !handshakeStep(c, policies, this, this.#runtime.logger)) return;
    this.#options.handle(c);
  }

  /**
   * A step refused the connection: close it, one access line (`client`: the socket peer unless
   * given; `fired`: the policy rule that closed it), slot back.
   */
  refused(
    c: Connection,
    result: string,
    reason: string,
    protocol: string | undefined,
    client = clientText(c.ip, c.port),
    fired?: { readonly policy: string; readonly action: string },
  ): void {
    c.raw.destroy();
    const record: AccessRecord = {
      listener: c.listener.name,
      client,
      bytesIn: c.raw.bytesRead,
      bytesOut: c.raw.bytesWritten,
      durationMs: millisSince(c.acceptedAt),
      result,
      reason,
    };
    if (protocol !== undefined) record.protocol = protocol;
    if (fired !== undefined) {
      record.policy = fired.policy;
      record.action = fired.action;
    }
    logConnection(record, this.#runtime.accessLog);
    c.done();
  }

  /**
   * Connection.done: the slot, the policy hold, the engine hold and the timers go back, once;
   * the policies that observe ends are told (`finish`, ended `connection`) only when one does.
   */
  ended(c: Connection): void {
    c.policyHold?.release();
    if (c.lifetime !== undefined) disarm(c.lifetime);
    if (c.halfClose !== undefined) disarm(c.halfClose);
    const b = c.bound as Bound;
    if (c.member !== undefined) this.#open.remove(c.member);
    b.open--;
    this.#runtime.admission.release(c.slot, c.key, c.handle);
    // After the slots are back, before the engine may close (its last connection retires it).
    connectionFinished(c);
    this.#runtime.release(c.engine);
    if (this.#open.size === 0) this.#idle?.();
  }

  /** Closes a socket before reading from it, with one access-log line. */
  #reject(socket: Socket, listener: ListenerConfig, result: 'overloaded' | 'proxy_rejected', client: string): void {
    socket.destroy();
    const record: AccessRecord = {
      listener: listener.name,
      client,
      bytesIn: 0,
      bytesOut: 0,
      durationMs: 0,
      result,
    };
    logConnection(record, this.#runtime.accessLog);
  }
}
