/**
 * Opening an upstream connection under one deadline (`limits.connectTimeout`, DNS included).
 * Hostnames are resolved at connect time through the system resolver and cached briefly.
 */
import { lookup } from 'node:dns';
import { isIP, type LookupFunction, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
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

/**
 * Connects to host:port (over TLS when `tls` is given, handshake included in the deadline);
 * resolves with the connected socket (paused), rejects with ConnectError.
 */
export function connectBackend(
  host: string,
  port: number,
  timeoutMs: number,
  tls?: UpstreamTlsOptions,
): Promise<Socket> {
  return new Promise((resolvePromise, reject) => {
    let socket = new Socket({ allowHalfOpen: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ConnectError(`connect ${host}:${port}: timed out after ${timeoutMs}ms`, true));
    }, timeoutMs);
    const onError = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new ConnectError(`connect ${host}:${port}: ${err.message}`, false, isDescriptorExhaustion(err)));
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.removeListener('error', onError);
      if (tls !== undefined) {
        // Upstream TLS (cluster `tls:`): the handshake counts inside the same connectTimeout.
        socket = tlsConnect({
          socket,
          host,
          secureContext: tls.secureContext,
          rejectUnauthorized: tls.rejectUnauthorized,
          ...(tls.servername === undefined ? {} : { servername: tls.servername }),
          ...(tls.ALPNProtocols === undefined ? {} : { ALPNProtocols: tls.ALPNProtocols }),
        });
        const onTlsError = (err: Error) => onError(new Error(`tls: ${err.message}`));
        socket.once('error', onTlsError);
        socket.once('secureConnect', () => {
          clearTimeout(timer);
          socket.removeListener('error', onTlsError);
          resolvePromise(socket);
        });
        return;
      }
      clearTimeout(timer);
      resolvePromise(socket);
    });
    socket.setNoDelay(true);
    socket.connect({ host, port, ...(isIP(host) === 0 ? { lookup: cachedLookup } : {}) });
  });
}
