/**
 * nginx for interop tests: `startNginx(servers)` writes a config into a temp dir (one worker,
 * errors and temp files inside it, `daemon off`), runs `nginx -c cfg -p dir` in the foreground,
 * and resolves once every given port answers. Loopback ports only.
 *
 * `close()` kills the master it started (by its pid; the worker exits with it) and removes the
 * temp dir.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PeerProcess, startPeerProcess } from './peer-process.ts';

/** Where the machine's nginx lives (Debian package). */
export const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

/** True when nginx is installed (interop tests say so and are skipped otherwise). */
export function nginxAvailable(): boolean {
  return existsSync(NGINX_BIN);
}

export type Nginx = PeerProcess;

/** True once a TCP connect to `port` succeeds. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.on('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** Starts nginx with the `http { … }` body `servers`, waiting until each of `ports` accepts. */
export async function startNginx(servers: string, ports: readonly number[], timeoutMs = 10_000): Promise<Nginx> {
  const dir = await mkdtemp(join(tmpdir(), 'swb-nginx-'));
  await mkdir(join(dir, 'logs'));
  const cfg = [
    'daemon off;',
    'master_process on;',
    'worker_processes 1;',
    process.getuid?.() === 0 ? 'user root;' : '',
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    'events { worker_connections 256; }',
    'http {',
    '  access_log off;',
    `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;`,
    `  fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
    servers,
    '}',
    '',
  ].join('\n');
  const file = join(dir, 'nginx.conf');
  await writeFile(file, cfg);
  return startPeerProcess({
    name: 'nginx',
    bin: NGINX_BIN,
    args: ['-c', file, '-p', dir, '-e', `${dir}/error.log`],
    dir,
    config: cfg,
    // Every port must accept.
    ready: async () => {
      for (const port of ports) if (!(await listening(port))) return false;
      return true;
    },
    signal: 'SIGTERM',
    timeoutMs,
  });
}
