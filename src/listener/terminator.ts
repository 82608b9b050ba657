/**
 * TLS termination (step 4 of README.md): server-side handshakes on accepted sockets, with the
 * engine's per-SNI certificates, its `clientAuth` policy and the ALPN list of the panel.
 *
 *   raw socket ──► Terminator (a tls.Server that never listens, one per certificates × ALPN)
 *                    │ server.emit('connection', raw): handshake under limits.peekTimeout
 *                    ▼
 *                  'secureConnection' (TLSSocket, `_parent` = raw) ──► waiter.secured(tls)
 *                  handshake failed / timed out / client certificate refused ──► raw 'close'
 *                                                                  ──► waiter.handshakeFailed(reason)
 *
 * A `tls.Server` is used rather than a bare `new TLSSocket()` because only the server path
 * verifies the client certificate (sets `authorized`, honours `rejectUnauthorized`) and applies
 * the handshake timeout. Pending handshakes are keyed by the raw socket object (the TLSSocket's
 * `_parent`), never by the peer address: a peer that reset before the accept has none, and two
 * such peers would share one key and leak a slot.
 *
 * Half-close is off during the handshake and on again once it is done: listeners accept with
 * `allowHalfOpen` (the splice forwards a client's FIN), and a TLSSocket inherits it from the raw
 * socket, so a client whose FIN came before its Finished (one that closes at once after its own
 * handshake callback) would otherwise hold the slot until the handshake timeout.
 */
import type { Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { CertificateStore } from '../tls/certificate-store.ts';
import type { ListenerTls } from '../tls/listener-tls.ts';

/** Who waits for a handshake: exactly one of the two methods runs, once. */
export interface HandshakeWaiter {
  secured(socket: TLSSocket): void;
  handshakeFailed(reason: string): void;
}

interface Pending {
  readonly waiter: HandshakeWaiter;
  reason: string | undefined;
  /** The raw socket closed before the handshake completed; settled on the next turn (`onRawClose`). */
  closing: boolean;
}

/**
 * A handshake in progress, in a slot of its raw socket rather than a module-level WeakMap: a
 * long-lived table that connections join and leave keeps them alive through scavenges
 * (src/base/member-list.ts says why).
 */
const kPending = Symbol('switchboard.handshake');
type Handshaking = Socket & { [kPending]?: Pending | undefined };

const parentOf = (s: TLSSocket): Socket | undefined => (s as TLSSocket & { _parent?: Socket })._parent;

/** The handshake still waiting on `raw` (not closing), if any. */
function pendingOf(raw: Socket | undefined): Pending | undefined {
  const p = raw === undefined ? undefined : (raw as Handshaking)[kPending];
  return p === undefined || p.closing ? undefined : p;
}

/** The raw socket closed: if its handshake never completed, that is the failure. */
function onRawClose(this: Socket): void {
  const p = pendingOf(this);
  if (p === undefined) return;
  p.closing = true;
  // The TLS socket's own close handler (after this one) reports why, e.g. a client certificate
  // that failed verification (Node destroys that socket without an error of its own).
  setImmediate(settleClosed, this, p);
}

function settleClosed(raw: Socket, p: Pending): void {
  (raw as Handshaking)[kPending] = undefined;
  p.waiter.handshakeFailed(p.reason ?? 'client closed during the handshake');
}

function onSecure(socket: TLSSocket): void {
  const raw = parentOf(socket);
  const p = pendingOf(raw);
  if (p === undefined) {
    socket.destroy();
    return;
  }
  (raw as Handshaking)[kPending] = undefined;
  socket.allowHalfOpen = true;
  raw!.allowHalfOpen = true;
  p.waiter.secured(socket);
}

/**
 * The access-log reason for a failed handshake: `client_certificate_required` (mutual TLS, none
 * sent), `client_certificate_invalid` (one the listener's CA does not verify; Node destroys the
 * socket and records `authorizationError`), else OpenSSL's own words without its source path.
 */
export function handshakeReason(err: Error & { code?: string }, socket: TLSSocket): string {
  if (err.code === 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE') return 'client_certificate_required';
  const verify = (socket as TLSSocket & { authorizationError?: unknown }).authorizationError;
  if (typeof verify === 'string' && verify !== '') return 'client_certificate_invalid';
  const openssl = /SSL routines:[^:]*:([^:]+)/.exec(err.message);
  return openssl?.[1] ?? err.message;
}

function onClientError(err: Error, socket: TLSSocket): void {
  // Only remember why: the raw socket's 'close' settles the handshake as failed.
  const raw = parentOf(socket);
  const p = raw === undefined ? undefined : (raw as Handshaking)[kPending];
  if (p !== undefined) p.reason ??= handshakeReason(err, socket);
  socket.destroy();
}

/** Runs server-side handshakes for one listener's certificates and one ALPN list. */
export class Terminator {
  readonly #server: Server;
  readonly #tls: Pick<ListenerTls, 'serverOptions'> & { readonly store?: CertificateStore };
  #version: number;

  constructor(
    tls: Pick<ListenerTls, 'serverOptions'> & { readonly store?: CertificateStore },
    alpn: readonly string[],
    handshakeTimeout: number,
  ) {
    this.#tls = tls;
    this.#version = tls.store?.version ?? 0;
    this.#server = createServer({ ...tls.serverOptions, ALPNProtocols: [...alpn], handshakeTimeout });
    this.#server.on('secureConnection', onSecure);
    this.#server.on('tlsClientError', onClientError);
  }

  /** A file certificate was reloaded from disk: the server's default (no SNI) follows it. */
  #followStore(store: CertificateStore): void {
    this.#version = store.version;
    const first = store.default;
    if (first === undefined) return;
    const { SNICallback: _, ...options } = this.#tls.serverOptions;
    this.#server.setSecureContext({ ...options, cert: first.cert, key: first.key });
  }

  /** Starts the handshake on `raw`; `waiter` hears how it ended. */
  wrap(raw: Socket, waiter: HandshakeWaiter): void {
    const store = this.#tls.store;
    if (store !== undefined && store.version !== this.#version) this.#followStore(store);
    if (raw.closed) {
      waiter.handshakeFailed('client closed before the handshake');
      return;
    }
    (raw as Handshaking)[kPending] = { waiter, reason: undefined, closing: false };
    raw.once('close', onRawClose);
    raw.allowHalfOpen = false;
    this.#server.emit('connection', raw);
  }
}
