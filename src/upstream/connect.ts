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
import { arm, Deadline, disarm } from '../base/deadline.ts';
import { SwitchboardError } from '../base/errors.ts';
import { adopt, ownReadsOption } from '../data-path/own-reads.ts';
import type { UpstreamTlsOptions } from '../tls/upstream.ts';

/**
 * Why a connect failed: 'timeout' answers 504, anything else 502. Its code is the result it ends
 * with: `SWB_ERR_CONNECT_TIMEOUT`, `SWB_ERR_CONNECT_FAILED`, or `SWB_ERR_OVERLOADED` when exhausted.
 */
export class ConnectError extends SwitchboardError {
  readonly timeout: boolean;
  /**
   * True when the router itself ran out of file descriptors (EMFILE/ENFILE): the backend is not
   * at fault, so the failure is not held against its health.
   */
  readonly exhausted: boolean;
  constructor(message: string, timeout: boolean, exhausted = false) {
    super(exhausted ? 'SWB_ERR_OVERLOADED' : timeout ? 'SWB_ERR_CONNECT_TIMEOUT' : 'SWB_ERR_CONNECT_FAILED', message);
    this.name = 'ConnectError';
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
  /**
   * Read into reused buffers (src/data-path/own-reads.ts), for a consumer that takes each read as it comes
   * (a splice, a per-request link). Plain TCP only: with `tls` the TLS socket reads as usual.
   */
  readonly ownReads?: boolean;
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

/**
 * One connect in progress. Its socket listeners and its deadline's callback are shared by every
 * connect (the state is found in the socket's `kOpening` slot, cleared once settled): no
 * closure and no `once` wrapper per connection on the plain-TCP path (issue 18).
 */
class Opening {
  /** The raw socket, then the TLS socket once its handshake started (what the deadline destroys). */
  declare socket: Socket;
  declare readonly host: string;
  declare readonly port: number;
  declare readonly timeoutMs: number;
  declare readonly options: ConnectOptions;
  declare readonly connected: Connected;
  /** `timeoutMs` (a shared timer: src/base/deadline.ts). */
  declare readonly deadline: Deadline<Opening>;
  declare settled: boolean;

  constructor(
    socket: Socket,
    host: string,
    port: number,
    timeoutMs: number,
    options: ConnectOptions,
    connected: Connected,
  ) {
    this.socket = socket;
    this.host = host;
    this.port = port;
    this.timeoutMs = timeoutMs;
    this.options = options;
    this.connected = connected;
    this.deadline = new Deadline<Opening>(openingTimedOut, this);
    arm(this.deadline, timeoutMs);
    this.settled = false;
  }

  done(err: ConnectError | undefined, s: Socket | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.connected(err, s);
  }

  fail(err: Error): void {
    disarm(this.deadline);
    this.socket.destroy();
    this.done(
      new ConnectError(`connect ${this.host}:${this.port}: ${err.message}`, false, isDescriptorExhaustion(err)),
      undefined,
    );
  }
}

const kOpening = Symbol('switchboard.opening');
type OpeningSocket = Socket & { [kOpening]?: Opening | undefined };

function openingTimedOut(o: Opening): void {
  (o.socket as OpeningSocket)[kOpening] = undefined;
  o.socket.destroy();
  o.done(new ConnectError(`connect ${o.host}:${o.port}: timed out after ${o.timeoutMs}ms`, true), undefined);
}

function openingError(this: OpeningSocket, err: Error): void {
  const o = this[kOpening];
  this.removeListener('error', openingError);
  if (o === undefined) return;
  this[kOpening] = undefined;
  o.fail(err);
}

function openingConnect(this: OpeningSocket): void {
  const o = this[kOpening];
  this.removeListener('error', openingError);
  if (o === undefined) return;
  this[kOpening] = undefined;
  const { preface, tls } = o.options;
  if (preface !== undefined) this.write(preface);
  if (tls !== undefined) {
    secure(o, this, tls);
    return;
  }
  disarm(o.deadline);
  o.done(undefined, this);
}

/** Upstream TLS (cluster `tls:`): the handshake counts inside the same connectTimeout. */
function secure(o: Opening, socket: Socket, tls: UpstreamTlsOptions): void {
  const s: TLSSocket = tlsConnect({
    socket,
    host: o.host,
    secureContext: tls.secureContext,
    rejectUnauthorized: tls.rejectUnauthorized,
    ...(tls.servername === undefined ? {} : { servername: tls.servername }),
    ...(tls.ALPNProtocols === undefined ? {} : { ALPNProtocols: tls.ALPNProtocols }),
  });
  socket.on('error', noop); // the TLS socket reports the raw socket's errors from here on
  o.socket = s;
  const onTlsError = (err: Error) => o.fail(new Error(`tls: ${err.message}`));
  s.once('error', onTlsError);
  s.once('secureConnect', () => {
    s.removeListener('error', onTlsError);
    const { requireAlpn } = o.options;
    if (requireAlpn !== undefined && s.alpnProtocol !== requireAlpn) {
      o.fail(new Error(`tls: backend did not negotiate ${requireAlpn}`));
      return;
    }
    disarm(o.deadline);
    o.done(undefined, s);
  });
}

const noop = () => {};

/** `connectBackend` with a callback (the per-connection hot path: no promise); `done` runs once. */
export function openBackend(
  host: string,
  port: number,
  timeoutMs: number,
  options: ConnectOptions,
  connected: Connected,
): void {
  const allowHalfOpen = options.allowHalfOpen ?? true;
  const reads = options.ownReads === true && options.tls === undefined ? ownReadsOption() : undefined;
  const socket: OpeningSocket = new Socket(reads === undefined ? { allowHalfOpen } : { allowHalfOpen, onread: reads });
  if (reads !== undefined) {
    adopt(socket, reads);
    socket.pause(); // nothing is read until the splice takes the reads (own-reads.ts)
  }
  socket[kOpening] = new Opening(socket, host, port, timeoutMs, options, connected);
  socket.on('error', openingError);
  socket.on('connect', openingConnect);
  socket.setNoDelay(true);
  // Node calls `lookup` only for a hostname (an IP literal connects at once), so it is always
  // passed: no isIP regex and no spread of our own per connect.
  socket.connect({ host, port, lookup: cachedLookup });
}
