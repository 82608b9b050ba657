/**
 * The admin listener (`admin.address`, loopback by default): a node:http server for the
 * endpoints of routes.ts. It is not a traffic listener (no access log), but it has its own
 * connection caps and deadlines (connection-bounds.ts), so it cannot take the descriptors the
 * traffic listeners count on.
 *
 * 1. `startAdmin` binds `admin.address` (port 0 allowed: tests read `address()`).
 * 2. Each request is dispatched by `METHOD path` (query ignored); unknown paths answer 404,
 *    known paths with another method 405.
 * 3. Every other request passes auth.ts's `refusal()` first (open paths, Host, Origin, token,
 *    content type), with the policy read from the running config on each request, so a reload
 *    changes `token`, `open` and `allowedHosts` at once.
 * 4b. A reload that changes `address` rebinds (`rebind`, a reload stage of app/reload.ts): the
 *    new address is bound before the engine swap (a failure refuses the reload, naming
 *    `admin.address`), the old listener stops accepting after it, its open requests finish.
 * 4. A non-loopback address without a token starts (probes must keep answering) but serves
 *    only the open paths, and says so in a warning.
 * 5. `close()` stops accepting and closes idle keep-alive sockets.
 * 6. The dashboard's state (dashboard.ts: the traffic history sampled each second, the reloads)
 *    lives as long as the listener.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatHostPort } from '../../src/config/address.ts';
import type { AdminConfig } from '../../src/config/schema.ts';
import { listenError } from '../../src/listener/bind.ts';
import type { StagedChange } from '../runtime/reload-result.ts';
import { type AdminPolicy, adminToken, isLoopback, refusal } from './auth.ts';
import { type AdminBounds, boundConnections, serverOptions } from './connection-bounds.ts';
import { Dashboard } from './dashboard.ts';
import type { AdminDeps } from './deps.ts';
import { answerError, findRoute, refuse } from './routes.ts';
import { SHELL_PATHS } from './ui-routes.ts';

export type { AdminDeps } from './deps.ts';

/** A running admin listener. */
export interface AdminServer {
  /** The bound address (port 0 resolved). */
  address(): { host: string; port: number };
  /** Binds `config.address` now; `commit` moves to it and closes the old listener, `abort` undoes. */
  rebind(config: AdminConfig): Promise<StagedChange>;
  close(): Promise<void>;
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** Binds the admin listener described by `config`. */
export async function startAdmin(config: AdminConfig, base: AdminDeps): Promise<AdminServer> {
  const dashboard = new Dashboard(base);
  const deps: AdminDeps = { ...base, dashboard };
  let loopback = isLoopback(config.address.host);
  let bound = formatHostPort(config.address.host, config.address.port);
  const policy = (): AdminPolicy => {
    const current = deps.runtime.engine.loaded.config.admin ?? config;
    return {
      token: adminToken(current.token),
      loopback,
      address: bound,
      open: current.open,
      allowedHosts: current.allowedHosts,
      shell: SHELL_PATHS,
    };
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? '';
    const route = findRoute(method, path);
    if (route === undefined || route === 'method') {
      const status = route === 'method' ? 405 : 404;
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
    Promise.resolve()
      .then(() => route.handler(req, res, deps, route.params))
      .catch((err: unknown) => {
        if (!res.headersSent && answerError(res, err)) return;
        deps.runtime.logger.error({ err, path }, 'admin request failed');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('internal error\n');
      });
  };
  const bounds = (): AdminBounds => {
    const running = deps.runtime.engine.loaded.config;
    return { admin: running.admin ?? config, ipv6Prefix: running.limits.clientIpv6Prefix };
  };
  const bind = async (c: AdminConfig): Promise<Server> => {
    const server = createServer(serverOptions(c), onRequest);
    boundConnections(server, bounds, deps.runtime.logger);
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e) => reject(listenError('admin.address', c.address.host, c.address.port, e)));
      server.listen(c.address.port, c.address.host, () => resolve());
    });
    server.on('error', (err) => deps.runtime.logger.error({ err: err.message }, 'admin listener error'));
    return server;
  };
  const adopt = (c: AdminConfig, server: Server): void => {
    const a = server.address() as AddressInfo;
    loopback = isLoopback(c.address.host);
    bound = formatHostPort(a.address, a.port);
    if (!loopback && adminToken(c.token) === '') {
      deps.runtime.logger.warn(
        { admin: bound, open: c.open },
        'admin listener is not on loopback and has no token (admin.token or SWITCHBOARD_ADMIN_TOKEN): only the open paths are served',
      );
    }
  };
  let server = await bind(config).catch((e: unknown) => {
    dashboard.close();
    throw e;
  });
  adopt(config, server);
  return {
    address() {
      const a = server.address() as AddressInfo;
      return { host: a.address, port: a.port };
    },
    async rebind(next) {
      const fresh = await bind(next);
      return {
        commit() {
          const old = server;
          server = fresh;
          adopt(next, fresh);
          deps.runtime.logger.info({ admin: bound }, 'admin listener moved');
          void closeServer(old);
        },
        abort: () => closeServer(fresh),
      };
    },
    close() {
      dashboard.close();
      return closeServer(server);
    },
  };
}
