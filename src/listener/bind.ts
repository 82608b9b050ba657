/**
 * Binding one listener: the one place a listening socket is made, for every panel and every
 * worker thread. `reusePort` is passed as a listen option (worker threads bind the same port
 * and the kernel spreads connections over them), never patched into `net.Server`.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { ListenerConfig } from '../config/schema.ts';
import type { Logger } from '../log.ts';

export interface BindOptions {
  /** SO_REUSEPORT: several threads of one process listen on the same address. */
  readonly reusePort: boolean;
  readonly logger: Logger;
}

/** Listens on `l.address`; `onSocket` gets every accepted socket. Rejects naming the listener. */
export function bindListener(
  l: ListenerConfig,
  onSocket: (socket: Socket) => void,
  options: BindOptions,
): Promise<Server> {
  const server = createServer({ allowHalfOpen: true, noDelay: true }, onSocket);
  return new Promise((resolve, reject) => {
    const failed = (err: Error) =>
      reject(new Error(`listeners.${l.name}: cannot listen on ${l.address.host}:${l.address.port}: ${err.message}`));
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
