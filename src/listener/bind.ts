/**
 * Binding one listener: the one place a listening socket is made, for every panel and every
 * worker thread. `reusePort` is passed as a listen option (worker threads bind the same port
 * and the kernel spreads connections over them), never patched into `net.Server`.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { SwitchboardError } from '../base/errors.ts';
import type { Logger } from '../base/log.ts';
import type { ListenerConfig } from '../config/schema.ts';

export interface BindOptions {
  /** SO_REUSEPORT: several threads of one process listen on the same address. */
  readonly reusePort: boolean;
  readonly logger: Logger;
  /** The config path of the address, for the error (`listeners[0].address`). */
  readonly where?: string;
}

const LISTEN_REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'is in use',
  EACCES: 'needs privileges (ports below 1024 are for root or CAP_NET_BIND_SERVICE)',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

/**
 * The one-line error of a failed bind: `listeners[0].address: 127.0.0.1:8080 is in use
 * (EADDRINUSE)`; code SWB_ERR_LISTEN (the CLI exits 1 with this line, no stack).
 */
export function listenError(where: string, host: string, port: number, err: Error): SwitchboardError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const reason = LISTEN_REASONS[code];
  const hostPort = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const what =
    reason !== undefined ? `${hostPort} ${reason} (${code})` : `cannot listen on ${hostPort}: ${err.message}`;
  return new SwitchboardError('SWB_ERR_LISTEN', `${where}: ${what}`, { cause: err });
}

/** Listens on `l.address`; `onSocket` gets every accepted socket. Rejects naming the listener. */
export function bindListener(
  l: ListenerConfig,
  onSocket: (socket: Socket) => void,
  options: BindOptions,
): Promise<Server> {
  const server = createServer({ allowHalfOpen: true, noDelay: true }, onSocket);
  return new Promise((resolve, reject) => {
    const where = options.where ?? `listeners.${l.name}.address`;
    const failed = (err: Error) => reject(listenError(where, l.address.host, l.address.port, err));
    server.once('error', failed);
    server.listen({ host: l.address.host, port: l.address.port, backlog: 4096, reusePort: options.reusePort }, () => {
      server.removeListener('error', failed);
      server.on('error', (err) => options.logger.error({ listener: l.name, err: err.message }, 'listener error'));
      resolve(server);
    });
  });
}

/** The bound address of `server` as `host:port`, or '' before it listens. */
export function boundAddress(server: Server): { host: string; port: number } | undefined {
  const a = server.address();
  return a !== null && typeof a === 'object' ? { host: a.address, port: a.port } : undefined;
}
