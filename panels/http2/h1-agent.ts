/**
 * A bounded keep-alive agent for one HTTP/1.1 upstream pool key (a backend, its TLS settings,
 * and with an outbound PROXY header one client):
 *
 *   addRequest ─► idle socket? ──yes──► reuse
 *                     │ no
 *                     ├─ open + connecting < max ──► dial (src/upstream/dial.ts) ─► assign
 *                     └─ else ──► queue (FIFO) ──► a freed socket, or a new dial when one closes
 *
 * 1. Node's own `http.Agent` counts a socket only once its (asynchronous) connect has finished,
 *    so 2,000 requests arriving together start 2,000 connects. Here a connect in progress counts
 *    against `max` from the start: the pool never holds more than `max` sockets.
 * 2. Connections are made by the upstream pipeline's `dial` with `plan` (refreshed on every
 *    request, so after a reload new connections use the new TLS contexts): registry, PROXY
 *    header, TLS, diagnostics. A failed dial fails only the request it was made for (which the
 *    caller retries on another backend) and the queue moves on.
 * 3. A socket idle for `idleTimeout` (or silent that long during a request) is destroyed.
 * 4. `onEmpty` runs when the last socket closed and nothing waits, so pools of private keys and
 *    of retired settings go away by themselves.
 */
import { Agent, type ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { InternalError } from '../../src/base/errors.ts';
import type { Backend } from '../../src/contracts/types.ts';
import { type DialPlan, dial } from '../../src/upstream/index.ts';

/** The part of ClientRequest an agent hands sockets (or a connect error) to. */
interface SocketTaker {
  onSocket(socket: Socket | undefined, err?: Error): void;
}

export class BoundedAgent extends Agent {
  /** How the next connection is made; `H1Pool.open` refreshes it. */
  plan: DialPlan;
  /** The attempt number reported on the diagnostics channel for the next connection. */
  attempt = 1;
  readonly #backend: Backend;
  readonly #max: number;
  readonly #idleTimeout: number;
  readonly #onEmpty: () => void;
  readonly #idle: Socket[] = [];
  readonly #queue: ClientRequest[] = [];
  #count = 0;
  #closing = false;

  constructor(backend: Backend, plan: DialPlan, max: number, idleTimeout: number, onEmpty: () => void) {
    super({ keepAlive: true, maxSockets: max, timeout: idleTimeout });
    this.#backend = backend;
    this.plan = plan;
    this.#max = max;
    this.#idleTimeout = idleTimeout;
    this.#onEmpty = onEmpty;
  }

  /** Called by ClientRequest (replaces Node's pool logic entirely). */
  addRequest(req: ClientRequest): void {
    const socket = this.#takeIdle();
    if (socket !== undefined) this.#assign(req, socket, true);
    else if (this.#count < this.#max) this.#create(req);
    else this.#queue.push(req);
  }

  #takeIdle(): Socket | undefined {
    let s = this.#idle.pop();
    while (s !== undefined && (s.destroyed || !s.writable)) s = this.#idle.pop();
    return s;
  }

  #assign(req: ClientRequest, socket: Socket, reused: boolean): void {
    if (reused) this.reuseSocket(socket, req);
    (req as unknown as SocketTaker).onSocket(socket);
  }

  #create(req: ClientRequest): void {
    this.#count++;
    dial(this.#backend, this.plan, this.attempt).then(
      (socket) => {
        this.#install(socket);
        if (req.destroyed) this.#free(socket);
        else this.#assign(req, socket, false);
      },
      (err: unknown) => {
        this.#count--;
        (req as unknown as SocketTaker).onSocket(undefined, err as Error);
        this.#next();
      },
    );
  }

  #install(socket: Socket): void {
    let counted = true;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      this.#count--;
    };
    socket.on('error', () => {}); // the request in flight hears errors through its own listener
    socket.on('free', () => this.#free(socket));
    // An upgraded connection leaves the pool (the http2 panel forwards no upgrades; kept for safety).
    socket.once('agentRemove', () => {
      uncount();
      this.#next();
    });
    socket.on('timeout', () => socket.destroy());
    socket.setTimeout(this.#idleTimeout);
    socket.once('close', () => {
      const i = this.#idle.indexOf(socket);
      if (i !== -1) this.#idle.splice(i, 1);
      uncount();
      this.#next();
      if (this.#count === 0 && this.#queue.length === 0) this.#onEmpty();
    });
  }

  /** A response ended and the connection may be reused (emitted by ClientRequest). */
  #free(socket: Socket): void {
    if (socket.destroyed || !socket.writable || this.#closing) {
      socket.destroy();
      return;
    }
    const req = this.#shift();
    if (req !== undefined) {
      this.#assign(req, socket, true);
      return;
    }
    // keepSocketAlive: TCP keep-alive, unref, the idle timeout (shortened by a Keep-Alive hint).
    if (!(this.keepSocketAlive(socket) as unknown as boolean)) {
      socket.destroy();
      return;
    }
    this.#idle.push(socket);
  }

  #shift(): ClientRequest | undefined {
    let req = this.#queue.shift();
    while (req?.destroyed) req = this.#queue.shift();
    return req;
  }

  /** Starts connects for queued requests while under `max`. */
  #next(): void {
    while (this.#count < this.#max) {
      const req = this.#shift();
      if (req === undefined) return;
      this.#create(req);
    }
  }

  /** Closes idle connections now; busy ones close when their exchange ends. */
  override destroy(): void {
    this.#closing = true;
    for (const s of this.#idle.splice(0)) s.destroy();
  }

  /** Not used: connections are made by `dial`. */
  override createConnection(): Duplex | null | undefined {
    throw new InternalError('BoundedAgent makes its connections with dial');
  }
}
