/**
 * The admin listener (`admin.address`, loopback by default): a node:http server for the
 * endpoints of routes.ts. It is not a traffic listener: no limits, no access log.
 *
 * 1. `startAdmin` binds `admin.address` (port 0 allowed: tests read `address()`).
 * 2. Each request is dispatched by `METHOD path` (query ignored); unknown paths answer 404,
 *    known paths with another method 405.
 * 3. Every other request passes auth.ts's `refusal()` first (open paths, Host, Origin, token,
 *    content type), with the policy read from the running config on each request, so a reload
 *    changes `token`, `open` and `allowedHosts` at once (`address` needs a restart).
 * 4. A non-loopback address without a token starts (probes must keep answering) but serves
 *    only the open paths, and says so in a warning.
 * 5. `close()` stops accepting and closes idle keep-alive sockets.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatHostPort } from '../../src/config/address.ts';
import type { AdminConfig } from '../../src/config/schema.ts';
import { listenError } from '../../src/listener/bind.ts';
import { type AdminPolicy, adminToken, isLoopback, refusal } from './auth.ts';
import { type AdminDeps, knownPaths, refuse, routes } from './routes.ts';

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
  let bound = formatHostPort(config.address.host, config.address.port);
  const policy = (): AdminPolicy => {
    const current = deps.runtime.engine.loaded.config.admin ?? config;
    return {
      token: adminToken(current.token),
      loopback,
      address: bound,
      open: current.open,
      allowedHosts: current.allowedHosts,
    };
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? '';
    const handler = routes.get(`${method} ${path}`);
    if (handler === undefined) {
      const status = knownPaths.has(path) ? 405 : 404;
      res
        .writeHead(status, { 'content-type': 'text/plain' })
        .end(status === 405 ? 'method not allowed\n' : 'not found\n');
      return;
    }
    const refused = refusal({ method, path, headers: req.headersDistinct }, policy());
    if (refused !== undefined) {
      refuse(res, refused);
      return;
    }
    Promise.resolve(handler(req, res, deps)).catch((err: unknown) => {
      deps.runtime.logger.error({ err, path }, 'admin request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(listenError('admin.address', config.address.host, config.address.port, e)));
    server.listen(config.address.port, config.address.host, () => resolve());
  });
  server.on('error', (err) => deps.runtime.logger.error({ err: err.message }, 'admin listener error'));
  const a = server.address() as AddressInfo;
  bound = formatHostPort(a.address, a.port);
  if (!loopback && adminToken(config.token) === '') {
    deps.runtime.logger.warn(
      { admin: bound, open: config.open },
      'admin listener is not on loopback and has no token (admin.token or SWITCHBOARD_ADMIN_TOKEN): only the open paths are served',
    );
  }
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
