/**
 * The admin listener's connection bounds (issue 39): an admin port anyone can reach must not be
 * able to hold the descriptors the traffic listeners count on (src/process/nofile.ts reserves
 * `admin.maxConnections` of them, no more).
 *
 * 1. Every accepted socket is checked before node:http reads a byte (a `connection` listener
 *    put ahead of node:http's own): over `admin.maxConnections` open admin connections, or over
 *    `admin.maxConnectionsPerClient` of one client (the key of src/listener/client-key.ts: IPv6
 *    by `limits.clientIpv6Prefix`), it is closed at once, unanswered.
 * 2. node:http's own deadlines bound what an admitted connection may hold: the request head
 *    within `admin.headersTimeout` (also when no byte ever comes: answered 408 and closed), the
 *    whole request within `admin.requestTimeout`, and a kept-alive connection with no new request
 *    for `admin.idleTimeout` is closed. Head and request deadlines are checked every CHECK_MS.
 *    While a request is being answered no deadline runs (a POST /reload may take a while), as
 *    node:http does; a client that never reads its answer holds at most its capped places.
 * 2b. node:http stops checking head deadlines once the server closes, and `closeIdleConnections`
 *    leaves a connection that never sent a request: each connection also gets a socket timeout
 *    of `admin.headersTimeout` without a byte until its first request, so those close too.
 * 3. The settings are read from the running config on each new connection, so a reload applies
 *    them to the next connection (the open ones keep the deadlines they were accepted with).
 * 4. Refusals are logged as one warning at most every LOG_EVERY_MS, with how many since the last.
 */
import type { IncomingMessage, Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../../src/base/log.ts';
import type { AdminConfig } from '../../src/config/schema.ts';
import { clientKey } from '../../src/listener/client-key.ts';

/** How often node:http looks for connections past their head or request deadline. */
const CHECK_MS = 1_000;

/** At most one refusal warning per this long. */
const LOG_EVERY_MS = 10_000;

/** What the bounds read from the running config for each new connection. */
export interface AdminBounds {
  readonly admin: AdminConfig;
  readonly ipv6Prefix: number;
}

/** node:http options of an admin server for `admin`. */
export function serverOptions(admin: AdminConfig): ServerOptions {
  return {
    headersTimeout: admin.headersTimeout,
    requestTimeout: admin.requestTimeout,
    keepAliveTimeout: admin.idleTimeout,
    connectionsCheckingInterval: CHECK_MS,
  };
}

/** Puts the caps and deadlines of `current()` on every connection `server` accepts. */
export function boundConnections(server: Server, current: () => AdminBounds, logger: Logger): void {
  let open = 0;
  const perClient = new Map<string, number>();
  let refused = 0;
  let loggedAt = 0;
  const refuse = (socket: Socket, why: string) => {
    socket.destroy();
    refused++;
    const now = Date.now();
    if (now - loggedAt < LOG_EVERY_MS) return;
    loggedAt = now;
    logger.warn({ refused, why }, 'admin listener: connections closed unanswered over their cap');
    refused = 0;
  };
  // The answer is being made: no inactivity bound (node:http sets the keep-alive one after it).
  server.on('request', (req: IncomingMessage) => req.socket.setTimeout(0));
  server.prependListener('connection', (socket: Socket) => {
    const { admin, ipv6Prefix } = current();
    server.headersTimeout = admin.headersTimeout;
    server.requestTimeout = admin.requestTimeout;
    server.keepAliveTimeout = admin.idleTimeout;
    if (open >= admin.maxConnections) {
      refuse(socket, `admin.maxConnections ${admin.maxConnections}`);
      return;
    }
    const key = clientKey(socket.remoteAddress ?? '', ipv6Prefix);
    const n = perClient.get(key) ?? 0;
    if (admin.maxConnectionsPerClient > 0 && n >= admin.maxConnectionsPerClient) {
      refuse(socket, `admin.maxConnectionsPerClient ${admin.maxConnectionsPerClient} (${key})`);
      return;
    }
    open++;
    perClient.set(key, n + 1);
    socket.setTimeout(admin.headersTimeout);
    socket.once('close', () => {
      open--;
      const left = (perClient.get(key) ?? 1) - 1;
      if (left > 0) perClient.set(key, left);
      else perClient.delete(key);
    });
  });
}
