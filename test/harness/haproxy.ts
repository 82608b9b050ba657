/**
 * HAProxy for interop tests: `startHaproxy(sections)` writes a config into a temp dir, runs
 * `haproxy -f cfg -db` in the foreground, and resolves once it serves. Loopback ports only.
 *
 * 1. The caller gives the frontend/backend sections; a `global`/`defaults` preamble with short
 *    timeouts and a readiness frontend on its own free port are added here.
 * 2. Readiness is polled on that extra frontend (an HTTP 200 it answers itself), so polling never
 *    opens a connection through the caller's frontends (which would add access-log lines).
 * 3. `close()` kills the process it started (by its pid) and removes the temp dir.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PeerProcess, startPeerProcess } from './peer-process.ts';

/** Where the machine's HAProxy lives (Debian package). */
export const HAPROXY_BIN = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy';

/** True when HAProxy is installed (interop tests are skipped otherwise). */
export function haproxyAvailable(): boolean {
  return existsSync(HAPROXY_BIN);
}

/** A loopback port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export type Haproxy = PeerProcess;

/** One GET to the readiness frontend; resolves true on a 200. */
function ready(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    let data = '';
    s.on('data', (c) => (data += c.toString('latin1')));
    s.on('error', () => resolve(false));
    s.on('close', () => resolve(data.startsWith('HTTP/1.1 200')));
    s.on('connect', () => s.end('GET / HTTP/1.1\r\nHost: ready\r\nConnection: close\r\n\r\n'));
    s.setTimeout(2000, () => s.destroy());
  });
}

/** Starts HAProxy with `sections` (frontends/backends/listens) and waits until it serves. */
export async function startHaproxy(sections: string, timeoutMs = 10_000): Promise<Haproxy> {
  const dir = await mkdtemp(join(tmpdir(), 'swb-haproxy-'));
  const readyPort = await freePort();
  const cfg = [
    'global',
    '  maxconn 256',
    'defaults',
    '  timeout connect 2s',
    '  timeout client 10s',
    '  timeout server 10s',
    'frontend swb_test_ready',
    `  bind 127.0.0.1:${readyPort}`,
    '  mode http',
    '  http-request return status 200',
    sections,
    '',
  ].join('\n');
  const file = join(dir, 'haproxy.cfg');
  await writeFile(file, cfg);
  return startPeerProcess({
    name: 'haproxy',
    bin: HAPROXY_BIN,
    args: ['-f', file, '-db'],
    dir,
    config: cfg,
    ready: () => ready(readyPort),
    signal: 'SIGKILL',
    timeoutMs,
  });
}
