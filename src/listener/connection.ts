/**
 * One admitted connection as it goes through the listener pipeline and on to the panel's
 * protocol handler: one object per connection (no closure per step), holding what every step
 * and the handler need, and the release that gives its admission slot back exactly once.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { TLSSocket } from 'node:tls';
import type { Deadline } from '../base/deadline.ts';
import type { MemberNode } from '../base/member-list.ts';
import type { ListenerConfig } from '../config/schema.ts';
import type { Hold } from '../contracts/policy.ts';
import type { Engine } from '../panel/contract.ts';
import type { ProxyHeader } from '../proxy-protocol/index.ts';
import type { ProxyWaiter } from './proxy-in.ts';
import type { HandshakeWaiter } from './terminator.ts';

/** What the pipeline does for a connection between its steps (implemented by ListenerPipeline). */
export interface PipelineSteps {
  afterProxy(c: Connection): void;
  afterTls(c: Connection): void;
  refused(c: Connection, result: string, reason: string, protocol: string | undefined): void;
  ended(c: Connection): void;
}

/** A connection admitted by the pipeline; the panel's handler gets it. */
export class Connection implements ProxyWaiter, HandshakeWaiter {
  /** The accepted TCP socket. */
  declare readonly raw: Socket;
  /** The stream to speak the protocol on: `raw`, or the TLSSocket once terminated. */
  declare socket: Socket;
  declare readonly listener: ListenerConfig;
  /** The engine in use at accept: the connection finishes on it. */
  declare readonly engine: Engine;
  /** `performance.now()` at accept: the peek deadline counts from here. */
  declare readonly acceptedAt: number;
  /** The PROXY header read on a `proxyProtocol` listener. */
  declare proxy: ProxyHeader | undefined;
  /** The socket peer address as counted by admission ('' when the kernel no longer knew it). */
  declare readonly ip: string;
  /** The socket peer's port (0 when the kernel no longer knew it). */
  declare readonly port: number;
  /** Admission handles (src/admission/admission.ts). */
  declare readonly slot: number;
  declare handle: number;
  /**
   * The per-client key counted (client-key.ts): the socket peer's, or on a PROXY listener the
   * PROXY source's once the header is read (the peer's until then, counted nowhere).
   */
  declare key: string;
  /** Lifetime and half-close deadlines (shared timers, src/base/deadline.ts; disarmed at the end). */
  declare lifetime: Deadline<Socket> | undefined;
  declare halfClose: Deadline<Socket> | undefined;
  /** The pipeline's own bookkeeping object for the listener (opaque here). */
  declare readonly bound: unknown;
  /** Its place among the pipeline's open connections (src/base/member-list.ts). */
  declare member: MemberNode<Socket> | undefined;
  /** What the `connection` policies let it through holding (an in-flight slot); given back by `done`. */
  declare policyHold: Hold | undefined;
  #steps: PipelineSteps | undefined;

  constructor(
    steps: PipelineSteps,
    raw: Socket,
    listener: ListenerConfig,
    bound: unknown,
    engine: Engine,
    ip: string,
    port: number,
    slot: number,
    handle: number,
    key: string,
  ) {
    this.#steps = steps;
    this.raw = raw;
    this.socket = raw;
    this.listener = listener;
    this.bound = bound;
    this.engine = engine;
    this.acceptedAt = performance.now();
    this.proxy = undefined;
    this.ip = ip;
    this.port = port;
    this.slot = slot;
    this.handle = handle;
    this.key = key;
    this.lifetime = undefined;
    this.halfClose = undefined;
    this.member = undefined;
    this.policyHold = undefined;
  }

  /** Milliseconds left of the peek deadline (`limits.peekTimeout` from accept), at least 1. */
  remaining(): number {
    return Math.max(1, Math.round(this.engine.limits.peekTimeout - (performance.now() - this.acceptedAt)));
  }

  /** The connection has fully closed: gives its admission slot and policy hold back (later calls do nothing). */
  done(): void {
    const steps = this.#steps;
    if (steps === undefined) return;
    this.#steps = undefined;
    steps.ended(this);
  }

  proxyRead(header: ProxyHeader): void {
    this.proxy = header;
    this.#steps?.afterProxy(this);
  }

  proxyFailed(result: 'proxy_rejected' | 'client_closed', reason: string): void {
    this.#steps?.refused(this, result, reason, undefined);
  }

  secured(socket: TLSSocket): void {
    this.socket = socket;
    this.#steps?.afterTls(this);
  }

  handshakeFailed(reason: string): void {
    // A code (client_certificate_required…) stands alone; OpenSSL's words get the prefix.
    if (/^[a-z_]+$/.test(reason)) {
      this.#steps?.refused(this, 'bad_request', reason, 'tls');
      return;
    }
    const text = reason.length > 0 ? reason[0]!.toLowerCase() + reason.slice(1) : reason;
    this.#steps?.refused(this, 'bad_request', `tls handshake: ${text}`, 'tls');
  }
}
