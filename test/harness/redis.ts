/**
 * A real Redis for tests: Debian's `redis-server` on a free loopback port with a temporary
 * directory (no persistence: no RDB snapshots, no AOF). `stop()` kills it, `restart()` brings it
 * back on the same port (so clients reconnect; the data is gone, as after a crash without
 * persistence), `close()` stops it and removes the directory. Tests skip when the binary is
 * missing (`redisBinary()` is undefined).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './etcd.ts';
import { startServerProcess } from './server-process.ts';

/** Path of the redis-server binary, or undefined when it is not installed. */
export function redisBinary(): string | undefined {
  return ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));
}

export interface TestRedis {
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** Kills the server. */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves when it answers PING. */
  restart(): Promise<void>;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

/** True when a PING on `port` gets +PONG. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let text = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      text += d.toString();
      if (text.includes('\r\n')) done(text.startsWith('+PONG'));
    });
  });
}

/** Starts redis-server on a free loopback port with a fresh directory. */
export async function startRedis(): Promise<TestRedis> {
  const bin = redisBinary();
  if (bin === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const dir = await mkdtemp(join(tmpdir(), 'swb-redis-'));
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--protected-mode',
    'yes',
    '--loglevel',
    'warning',
  ];
  const server = await startServerProcess('redis-server', bin, args, () => pong(port));
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: server.stop,
    restart: server.restart,
    async close() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
