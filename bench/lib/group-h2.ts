/**
 * The HTTP/2 group (issue 10, scenario `h2`): an h2c backend and HTTP/2 front ends.
 *
 * 1. The backend is nginx speaking h2c (prior knowledge) on its main port and HTTP/1.1 on a
 *    second one (a Node http2 + http server when nginx is missing).
 * 2. Targets: `direct` (the backend's h2c port), `node-h2-proxy` (the Node floor: a minimal
 *    node:http2 proxy, h2-proxy-server.ts), `switchboard-http2` (http2 panel, cluster
 *    `protocol: h2c`), `haproxy-h2` (HTTP mode, `bind … proto h2`, `server … proto h2`),
 *    `nginx-h2` (`listen … http2`, proxying over HTTP/1.1 keep-alive: nginx has no h2 upstream).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  haproxyH2Conf,
  nginxH2BackendConf,
  nginxH2FrontConf,
  switchboardH2Conf,
  switchboardH2Servers,
} from './peers-h2.ts';
import { freePort, waitForPort, which } from './proc.ts';
import { needs, startHaproxy, startNginx, startNode, startSwitchboard } from './targets.ts';
import type { Group, Spawner } from './types.ts';

const here = dirname(fileURLToPath(import.meta.url));

async function startH2Backend(dir: string, spawn: Spawner, prefer?: 'node') {
  const h1Port = await freePort();
  if (prefer !== 'node' && which('nginx') !== undefined) {
    // startNginx picks the main (h2c) port; the HTTP/1.1 port is fixed here.
    const port = await freePort();
    const home = join(dir, `backend-nginx-h2-${port}`);
    await mkdir(join(home, 'logs'), { recursive: true });
    await writeFile(join(home, 'nginx.conf'), nginxH2BackendConf(home, port, h1Port));
    const child = spawn.start(which('nginx') as string, [
      '-p',
      home,
      '-c',
      join(home, 'nginx.conf'),
      '-g',
      `daemon off; master_process on; pid ${home}/nginx.pid;`,
    ]);
    await waitForPort(port, child, 'nginx h2 backend');
    await waitForPort(h1Port, child, 'nginx h2 backend (http/1.1)');
    return { kind: 'nginx', port, altPort: h1Port, pids: () => [child.pid], stop: () => child.stop() };
  }
  const port = await freePort();
  const child = spawn.start(process.execPath, [join(here, 'h2-backend.ts'), String(port), String(h1Port)]);
  await waitForPort(port, child, 'node h2 backend');
  await waitForPort(h1Port, child, 'node h2 backend (http/1.1)');
  return { kind: 'node', port, altPort: h1Port, pids: () => [child.pid], stop: () => child.stop() };
}

/** The group behind the `h2` scenario. */
export const H2_GROUP: Group = {
  name: 'h2',
  loadgen: 'h2load',
  available: () => undefined,
  startBackend: startH2Backend,
  targets: [
    {
      name: 'direct',
      available: () => undefined,
      start: async (ctx) => ({ port: ctx.backendPort, pids: () => [...ctx.backendPids], stop: async () => {} }),
    },
    {
      // The Node floor (issue 18): one http2 server, one pooled upstream session, streams piped.
      name: 'node-h2-proxy',
      available: () => undefined,
      start: (ctx) =>
        startNode(ctx, 'node-h2-proxy', join(here, 'h2-proxy-server.ts'), (p) => [String(p), String(ctx.backendPort)]),
    },
    {
      name: 'haproxy-h2',
      available: needs('haproxy'),
      start: (ctx) => startHaproxy(ctx, 'haproxy-h2', (p) => haproxyH2Conf(p, ctx.backendPort)),
    },
    {
      name: 'nginx-h2',
      available: needs('nginx'),
      start: (ctx) =>
        startNginx(ctx, 'nginx-h2', (d, p) => nginxH2FrontConf(d, p, ctx.backendAltPort ?? ctx.backendPort)),
    },
    {
      name: 'switchboard-http2',
      available: () => undefined,
      start: (ctx) =>
        startSwitchboard(ctx, 'switchboard-http2', switchboardH2Conf, switchboardH2Servers(ctx.backendPort)),
    },
  ],
};
