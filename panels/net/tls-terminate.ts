/**
 * `tls: terminate` listeners: run the TLS handshake on an accepted socket, then hand the
 * decrypted stream to `handleConnection`, which peeks and routes it like plaintext HTTP/1.
 *
 *   accept ──► Terminator (one per engine × listener: a tls.Server that never listens)
 *                │ server.emit('connection', raw): handshake under limits.peekTimeout,
 *                │ certificate by SNI (src/tls/certificate-store.ts), optional client certificate
 *                ▼
 *              'secureConnection' (TLSSocket) ──► handleConnection(tlsSocket, …)
 *              handshake failed / timed out / refused client certificate ──► close, one access line
 *
 * A `tls.Server` is used rather than a bare `new TLSSocket()` because only the server path
 * verifies the client certificate (sets `authorized`, honours `rejectUnauthorized`) and applies
 * the handshake timeout. The server's 'secureConnection' does not say which raw socket it came
 * from, so pending handshakes are keyed by the peer's address and port, unique per listener.
 */
import type { Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { ListenerConfig } from '../../src/config/schema.ts';
import { channels } from '../../src/diagnostics.ts';
import type { PanelRuntime } from '../../src/engine.ts';
import type { AccessRecord } from '../../src/log.ts';
import type { ListenerTls } from '../../src/tls/listener-tls.ts';
import { clientAddress } from './client-address.ts';
import { handleConnection } from './connection.ts';

interface Pending {
  readonly secure: (socket: TLSSocket) => void;
  readonly fail: (reason: string) => void;
  reason: string | undefined;
}

const peerKey = (s: Socket): string => `${s.remoteAddress}|${s.remotePort}`;

/** Runs server-side handshakes for one listener of one engine. */
class Terminator {
  readonly #server: Server;
  readonly #pending = new Map<string, Pending>();

  constructor(tls: ListenerTls, handshakeTimeout: number) {
    this.#server = createServer({ ...tls.serverOptions, handshakeTimeout });
    this.#server.on('secureConnection', (socket: TLSSocket) => {
      const key = peerKey(socket);
      const p = this.#pending.get(key);
      if (p === undefined) {
        socket.destroy();
        return;
      }
      this.#pending.delete(key);
      p.secure(socket);
    });
    this.#server.on('tlsClientError', (err: Error, socket: TLSSocket) => {
      // Only remember why: the raw socket's 'close' settles the handshake as failed.
      const p = this.#pending.get(peerKey(socket));
      if (p !== undefined) p.reason ??= err.message;
      socket.destroy();
    });
  }

  /** Starts the handshake on `raw`; exactly one of `secure` / `fail` runs. */
  wrap(raw: Socket, secure: (socket: TLSSocket) => void, fail: (reason: string) => void): void {
    const key = peerKey(raw);
    const entry: Pending = { secure, fail, reason: undefined };
    this.#pending.set(key, entry);
    raw.once('close', () => {
      if (this.#pending.get(key) !== entry) return;
      this.#pending.delete(key);
      fail(entry.reason ?? 'client closed during the handshake');
    });
    this.#server.emit('connection', raw);
  }
}

const terminators = new WeakMap<ListenerTls, Terminator>();

/** The engine's terminator for a listener, created on first use (new engine → new certificates). */
function terminatorFor(tls: ListenerTls, handshakeTimeout: number): Terminator {
  let t = terminators.get(tls);
  if (t === undefined) {
    t = new Terminator(tls, handshakeTimeout);
    terminators.set(tls, t);
  }
  return t;
}

/** One access-log line for a connection that never completed its handshake. */
function logFailure(
  runtime: PanelRuntime,
  listener: string,
  raw: Socket,
  client: string,
  started: number,
  reason: string,
) {
  const record: AccessRecord = {
    listener,
    client,
    protocol: 'tls',
    bytesIn: raw.bytesRead,
    bytesOut: raw.bytesWritten,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    result: 'bad_request',
    reason: `tls handshake: ${reason.length > 0 ? reason[0]!.toLowerCase() + reason.slice(1) : reason}`,
  };
  runtime.accessLog(record);
  if (channels.connectionEnd.hasSubscribers) channels.connectionEnd.publish({ record });
}

/**
 * `handleConnection` for a terminating listener: handshake first (certificates of the engine in
 * use at accept time), then the decrypted stream goes through the usual peek → route → splice.
 */
export function handleTerminated(
  raw: Socket,
  listener: ListenerConfig,
  runtime: PanelRuntime,
  done: () => void,
): Promise<void> {
  const engine = runtime.engine;
  const tls = engine.tls.listeners.get(listener.name);
  const started = performance.now();
  const client = clientAddress(raw);
  raw.on('error', () => {});
  if (tls === undefined) {
    // The listener was bound as terminating but this engine has no certificates for it.
    raw.destroy();
    logFailure(runtime, listener.name, raw, client, started, 'no certificates for this listener');
    done();
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    terminatorFor(tls, engine.limits.peekTimeout).wrap(
      raw,
      (socket) => handleConnection(socket, listener, runtime, done).then(resolve, reject),
      (reason) => {
        logFailure(runtime, listener.name, raw, client, started, reason);
        done();
        resolve();
      },
    );
  });
}
