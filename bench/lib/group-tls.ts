/**
 * The TLS passthrough group (issue 8, scenario `tlsconn`): a TLS backend and the targets that
 * forward TLS without terminating it.
 *
 * 1. The backend is nginx with `ssl` on a fresh self-signed P-256 certificate for `localhost`
 *    (a Node https server when nginx is missing); session resumption is off on it.
 * 2. Targets: `direct` (the backend), `node-pipe` (plain TCP pipe, no peek), `haproxy-tcp`
 *    (TCP mode, waits for the ClientHello and routes on `req.ssl_sni`), `switchboard-net`
 *    (net panel, `tls: passthrough` listener: peek the ClientHello, route by SNI, splice).
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selfSignedCert } from './cert.ts';
import { switchboardServers } from './peers.ts';
import { haproxySniConf, nginxTlsBackendConf, switchboardTlsConf, TLS_HOST } from './peers-tls.ts';
import { freePort, waitForPort, which } from './proc.ts';
import { needs, startHaproxy, startNginx, startNode, startSwitchboard } from './targets.ts';
import type { BenchContext, Group, Spawner } from './types.ts';

const here = dirname(fileURLToPath(import.meta.url));

async function startTlsBackend(dir: string, spawn: Spawner, prefer?: 'node') {
  const home = join(dir, 'tls-backend');
  await mkdir(home, { recursive: true });
  const { cert, key } = await selfSignedCert(home, TLS_HOST);
  if (prefer !== 'node' && which('nginx') !== undefined) {
    const ctx: BenchContext = { backendPort: 0, backendPids: [], dir, nodeFlags: [], spawn };
    const running = await startNginx(ctx, 'backend-nginx-tls', (d, p) => nginxTlsBackendConf(d, p, cert, key));
    return { ...running, kind: 'nginx' };
  }
  const port = await freePort();
  const child = spawn.start(process.execPath, [join(here, 'tls-backend.ts'), String(port), cert, key]);
  await waitForPort(port, child, 'node tls backend');
  return { kind: 'node', port, pids: () => [child.pid], stop: () => child.stop() };
}

/** The group behind the `tlsconn` scenario. */
export const TLS_GROUP: Group = {
  name: 'tls',
  available: () =>
    which('openssl') === undefined ? 'openssl is not installed (needed for the certificate)' : undefined,
  startBackend: startTlsBackend,
  targets: [
    {
      name: 'direct',
      available: () => undefined,
      start: async (ctx) => ({ port: ctx.backendPort, pids: () => [...ctx.backendPids], stop: async () => {} }),
    },
    {
      name: 'node-pipe',
      available: () => undefined,
      start: (ctx) =>
        startNode(ctx, 'node-pipe-tls', join(here, 'pipe-server.ts'), (p) => [String(p), String(ctx.backendPort)]),
    },
    {
      name: 'haproxy-tcp',
      available: needs('haproxy'),
      start: (ctx) => startHaproxy(ctx, 'haproxy-tcp-sni', (p) => haproxySniConf(p, ctx.backendPort)),
    },
    {
      name: 'switchboard-net',
      available: () => undefined,
      start: (ctx) =>
        startSwitchboard(ctx, 'switchboard-net-tls', switchboardTlsConf, switchboardServers(ctx.backendPort)),
    },
  ],
};
