/**
 * Opening an upstream connection under one deadline (`limits.connectTimeout`, DNS and the TLS
 * handshake included). Hostnames are resolved at connect time through the system resolver and
 * cached briefly.
 *
 *   TCP connect ──► [preface: the outbound PROXY header, in clear] ──► [TLS handshake] ──► ready
 *
 * The preface is written on the raw socket before any TLS byte, so a PROXY header always comes
 * first on the wire (spec §2), also towards TLS backends.
 */
import { lookup } from 'node:dns';
import { type LookupFunction, Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import type { UpstreamTlsOptions } from './tls/upstream.ts';

/** Why a connect failed: 'timeout' answers 504, anything else 502. */
export class ConnectError extends Error {
  readonly timeout: boolean;
  /**
   * True when the router itself ran out of file descriptors (EMFILE/ENFILE): the backend is not
   * at fault, so the failure is not held against its health.
   */
  readonly exhausted: boolean;
  constructor(message: string, timeout: boolean, exhausted = false) {
    super(message);
    this.timeout = timeout;
    this.exhausted = exhausted;
  }
}

/** Error codes meaning this process (EMFILE) or the system (ENFILE) has no descriptor left. */
export function isDescriptorExhaustion(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'EMFILE' || code === 'ENFILE';
}

const DNS_CACHE_MS = 5_000;
const dnsCache = new Map<string, { address: string; family: number; expires: number }>();

/** getaddrinfo gives no TTL, so answers are kept for DNS_CACHE_MS. */
const cachedLookup: LookupFunction = (hostname, options, callback) => {
  const hit = dnsCache.get(hostname);
  if (hit !== undefined && hit.expires > Date.now()) {
    if (options.all) callback(null, [{ address: hit.address, family: hit.family }]);
    else callback(null, hit.address, hit.family);
    return;
  }
  lookup(hostname, { family: options.family ?? 0, hints: options.hints ?? 0 }, (err, address, family) => {
    if (err === null) dnsCache.set(hostname, { address, family, expires: Date.now() + DNS_CACHE_MS });
    if (options.all) callback(err, err ? [] : [{ address, family }]);
    else callback(err, address, family);
  });
};

/** How to connect, besides where. */
export interface ConnectOptions {
  /** Wrap the connection in TLS (cluster `tls:`, or an `h2` upstream). */
  readonly tls?: UpstreamTlsOptions | undefined;
  /** Bytes written before anything else, in clear (the outbound PROXY header). */
  readonly preface?: Buffer | undefined;
  /**
   * Keep the socket writable after the backend's FIN (default true): a splice forwards each
   * half-close on its own. Pooled HTTP connections pass false, so a backend that goes away
   * closes the connection and its session notices at once.
   */
  readonly allowHalfOpen?: boolean;
  /** With `tls`: the ALPN protocol the backend must select, else the connect fails. */
  readonly requireAlpn?: string;
}

/** How a connect ends: a ConnectError, or the connected socket (paused). */
export type Connected = (err: ConnectError | undefined, socket: Socket | undefined) => void;

/**
 * Connects to host:port (over TLS when `options.tls` is given, handshake included in the
 * deadline); resolves with the connected socket (paused), rejects with ConnectError.
 */
export function connectBackend(
  host: string,
  port: number,
  timeoutMs: number,
  options: ConnectOptions = {},
): Promise<Socket> {
  return new Promise((resolve, reject) =>
    openBackend(host, port, timeoutMs, options, (err, socket) => (err === undefined ? resolve(socket!) : reject(err))),
  );
}

/** `connectBackend` with a callback (the per-connection hot path: no promise); `done` runs once. */
export function openBackend(
  host: string,
  port: number,
  timeoutMs: number,
  options: ConnectOptions,
  connected: Connected,
): void {
  const { tls, preface } = options;
  let settled = false;
  const done: Connected = (err, s) => {
    if (settled) return;
    settled = true;
    connected(err, s);
  };
  let socket = new Socket({ allowHalfOpen: options.allowHalfOpen ?? true });
  const timer = setTimeout(() => {
    socket.destroy();
    done(new ConnectError(`connect ${host}:${port}: timed out after ${timeoutMs}ms`, true), undefined);
  }, timeoutMs);
  const onError = (err: Error) => {
    clearTimeout(timer);
    socket.destroy();
    done(new ConnectError(`connect ${host}:${port}: ${err.message}`, false, isDescriptorExhaustion(err)), undefined);
  };
  socket.once('error', onError);
  socket.once('connect', () => {
    socket.removeListener('error', onError);
    if (preface !== undefined) socket.write(preface);
    if (tls !== undefined) {
      // Upstream TLS (cluster `tls:`): the handshake counts inside the same connectTimeout.
      const secure: TLSSocket = tlsConnect({
        socket,
        host,
        secureContext: tls.secureContext,
        rejectUnauthorized: tls.rejectUnauthorized,
        ...(tls.servername === undefined ? {} : { servername: tls.servername }),
        ...(tls.ALPNProtocols === undefined ? {} : { ALPNProtocols: tls.ALPNProtocols }),
      });
      socket.on('error', () => {}); // the TLS socket reports the raw socket's errors from here on
      socket = secure;
      const onTlsError = (err: Error) => onError(new Error(`tls: ${err.message}`));
      secure.once('error', onTlsError);
      secure.once('secureConnect', () => {
        secure.removeListener('error', onTlsError);
        if (options.requireAlpn !== undefined && secure.alpnProtocol !== options.requireAlpn) {
          onError(new Error(`tls: backend did not negotiate ${options.requireAlpn}`));
          return;
        }
        clearTimeout(timer);
        done(undefined, secure);
      });
      return;
    }
    clearTimeout(timer);
    done(undefined, socket);
  });
  socket.setNoDelay(true);
  // Node calls `lookup` only for a hostname (an IP literal connects at once), so it is always
  // passed: no isIP regex and no spread of our own per connect.
  socket.connect({ host, port, lookup: cachedLookup });
}
