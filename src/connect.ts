/**
 * Opening an upstream connection under one deadline (`limits.connectTimeout`, DNS included).
 * Hostnames are resolved at connect time through the system resolver and cached briefly.
 */
import { lookup } from 'node:dns';
import { isIP, type LookupFunction, Socket } from 'node:net';

/** Why a connect failed: 'timeout' answers 504, anything else 502. */
export class ConnectError extends Error {
  readonly timeout: boolean;
  constructor(message: string, timeout: boolean) {
    super(message);
    this.timeout = timeout;
  }
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

/** Connects to host:port; resolves with the connected socket (paused), rejects with ConnectError. */
export function connectBackend(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolvePromise, reject) => {
    const socket = new Socket({ allowHalfOpen: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ConnectError(`connect ${host}:${port}: timed out after ${timeoutMs}ms`, true));
    }, timeoutMs);
    const onError = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new ConnectError(`connect ${host}:${port}: ${err.message}`, false));
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', onError);
      resolvePromise(socket);
    });
    socket.setNoDelay(true);
    socket.connect({ host, port, ...(isIP(host) === 0 ? { lookup: cachedLookup } : {}) });
  });
}
