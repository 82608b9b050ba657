/**
 * The admin listener (`admin.address`, loopback by default): a node:http server for the
 * endpoints of routes.ts. It is not a traffic listener: no limits, no access log.
 *
 * 1. `startAdmin` binds `admin.address` (port 0 allowed: tests read `address()`).
 * 2. Each request is dispatched by `METHOD path` (query ignored); unknown paths answer 404,
 *    known paths with another method 405.
 * 3. Mutating calls check the bearer token (auth.ts); `POST /reload` runs the shared reload.
 * 4. `close()` stops accepting and closes idle keep-alive sockets.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AdminConfig } from '../../src/config/schema.ts';
import { isLoopback } from './auth.ts';
import { type AdminDeps, knownPaths, routes } from './routes.ts';

export type { AdminDeps } from './routes.ts';

/** A running admin listener. */
export interface AdminServer {
  /** The bound address (port 0 resolved). */
  address(): { host: string; port: number };
  close(): Promise<void>;
}

/** Binds the admin listener described by `config`. */
export async function startAdmin(config: AdminConfig, deps: AdminDeps): Promise<AdminServer> {
  const loopback = isLoopback(config.address.host);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const handler = routes.get(`${req.method} ${path}`);
    if (handler === undefined) {
      const status = knownPaths.has(path) ? 405 : 404;
      res
        .writeHead(status, { 'content-type': 'text/plain' })
        .end(status === 405 ? 'method not allowed\n' : 'not found\n');
      return;
    }
    Promise.resolve(handler(req, res, deps, loopback)).catch((err: unknown) => {
      deps.runtime.logger.error({ err, path }, 'admin request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new Error(`admin.address: cannot listen on ${config.address.host}:${config.address.port}: ${e.message}`)),
    );
    server.listen(config.address.port, config.address.host, () => resolve());
  });
  server.on('error', (err) => deps.runtime.logger.error({ err: err.message }, 'admin listener error'));
  return {
    address() {
      const a = server.address() as AddressInfo;
      return { host: a.address, port: a.port };
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}
