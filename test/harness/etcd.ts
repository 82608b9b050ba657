/**
 * A real etcd for tests: the Debian `etcd` binary on free loopback ports with a temporary data
 * directory. `stop()` kills it keeping the data, `restart()` brings it back on the same ports
 * (so clients reconnect), `close()` stops it and removes the data. Tests skip when the binary
 * is missing (`etcdBinary()` is undefined).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess } from './server-process.ts';

/** Path of the etcd binary, or undefined when it is not installed. */
export function etcdBinary(): string | undefined {
  return ['/usr/bin/etcd', '/usr/local/bin/etcd'].find((p) => existsSync(p));
}

/** A free loopback port (bound then released; the kernel does not hand it out again at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export interface TestEtcd {
  /** `http://127.0.0.1:PORT`. */
  readonly endpoint: string;
  /** Kills the server, keeping its data directory. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and data; resolves when it answers. */
  restart(): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/health`);
    return res.ok;
  } catch {
    return false;
  }
}

/** Starts etcd on free loopback ports with a fresh data directory. */
export async function startEtcd(): Promise<TestEtcd> {
  const bin = etcdBinary();
  if (bin === undefined) throw new Error('etcd is not installed (apt-get install etcd-server etcd-client)');
  const dir = await mkdtemp(join(tmpdir(), 'swb-etcd-'));
  const clientPort = await freePort();
  const peerPort = await freePort();
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name=test',
    `--data-dir=${join(dir, 'data')}`,
    `--listen-client-urls=${endpoint}`,
    `--advertise-client-urls=${endpoint}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=test=${peer}`,
    '--log-level=error',
  ];
  const server = await startServerProcess('etcd', bin, args, () => answers(endpoint));
  return {
    endpoint,
    stop: server.stop,
    restart: server.restart,
    async close() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
