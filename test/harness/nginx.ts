/**
 * nginx for interop tests: `startNginx(servers)` writes a config into a temp dir (one worker,
 * errors and temp files inside it, `daemon off`), runs `nginx -c cfg -p dir` in the foreground,
 * and resolves once every given port answers. Loopback ports only.
 *
 * `close()` kills the master it started (by its pid; the worker exits with it) and removes the
 * temp dir.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the machine's nginx lives (Debian package). */
export const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

/** True when nginx is installed (interop tests say so and are skipped otherwise). */
export function nginxAvailable(): boolean {
  return existsSync(NGINX_BIN);
}

export interface Nginx {
  /** stdout + stderr so far (for failure messages). */
  output(): string;
  close(): Promise<void>;
}

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
  let out = '';
  const child: ChildProcess = spawn(NGINX_BIN, ['-c', file, '-p', dir, '-e', `${dir}/error.log`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  let exited = false;
  const exit = new Promise<void>((r) =>
    child.once('exit', () => {
      exited = true;
      r();
    }),
  );
  const close = async () => {
    if (!exited && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
    await exit;
    await rm(dir, { recursive: true, force: true });
  };
  const until = Date.now() + timeoutMs;
  for (const port of ports) {
    while (!(await listening(port))) {
      if (exited || Date.now() > until) {
        await close();
        throw new Error(`nginx did not start: ${out}\n--- config ---\n${cfg}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { output: () => out, close };
}
