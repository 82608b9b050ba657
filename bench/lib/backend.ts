/**
 * The backend every target forwards to: nginx when installed (fixed body at /small, a 1 MiB
 * file at /1m), otherwise a tuned node:http server in its own process.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nginxBackendConf } from './peers.ts';
import { freePort, waitForPort, which } from './proc.ts';
import { BIG_PATH, BIG_SIZE } from './scenarios-shared.ts';
import { startNginx } from './targets.ts';
import type { BenchContext, Running, Spawner } from './types.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** A started backend and what kind it is. */
export interface Backend extends Running {
  readonly kind: 'nginx' | 'node';
}

/** Starts the backend (`prefer: 'node'` forces the Node fallback). */
export async function startBackend(dir: string, spawn: Spawner, prefer?: 'node'): Promise<Backend> {
  if (prefer !== 'node' && which('nginx') !== undefined) {
    const www = join(dir, 'www');
    await mkdir(www, { recursive: true });
    await writeFile(join(www, BIG_PATH.slice(1)), Buffer.alloc(BIG_SIZE, 'x'));
    const ctx: BenchContext = { backendPort: 0, backendPids: [], dir, nodeFlags: [], spawn };
    const running = await startNginx(ctx, 'backend-nginx', (d, p) => nginxBackendConf(d, p, www));
    return { ...running, kind: 'nginx' };
  }
  const port = await freePort();
  const child = spawn.start(process.execPath, [join(here, 'node-backend.ts'), String(port)]);
  await waitForPort(port, child, 'node backend');
  return { kind: 'node', port, pids: () => [child.pid], stop: () => child.stop() };
}
