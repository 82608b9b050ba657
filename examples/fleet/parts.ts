/**
 * Starting each part of the example in its run directory, each resolving once it serves:
 * etcd, Redis, pebble-challtestsrv (DNS: every name is 127.0.0.1, where HAProxy listens),
 * pebble (validating through HAProxy), HAProxy, and one router (`switchboard start`).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ports } from './ports.ts';
import { httpGet, httpsText, redisPong } from './probes.ts';
import { type Part, spawnLogged, waitUntil } from './processes.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** The programs the example runs (Debian packages: etcd-server, redis-server, pebble, haproxy, openssl). */
export const BINARIES = {
  etcd: '/usr/bin/etcd',
  redis: '/usr/bin/redis-server',
  pebble: '/usr/bin/pebble',
  challtestsrv: '/usr/bin/pebble-challtestsrv',
  haproxy: process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy',
  openssl: '/usr/bin/openssl',
} as const;

export async function startEtcd(dir: string, p: Ports): Promise<Part> {
  const client = `http://127.0.0.1:${p.etcd}`;
  const peer = `http://127.0.0.1:${p.etcdPeer}`;
  const part = spawnLogged(dir, 'etcd', BINARIES.etcd, [
    '--name=example',
    `--data-dir=${join(dir, 'etcd-data')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=example=${peer}`,
    '--log-level=warn',
  ]);
  await waitUntil(part, 'etcd answering', async () => (await httpGet(p.etcd, '/health'))?.status === 200);
  return part;
}

export async function startRedis(dir: string, p: Ports): Promise<Part> {
  const part = spawnLogged(dir, 'redis', BINARIES.redis, [
    '--port',
    String(p.redis),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--loglevel',
    'warning',
  ]);
  await waitUntil(part, 'redis answering', () => redisPong(p.redis));
  return part;
}

/** challtestsrv as DNS only: every A query answers 127.0.0.1. */
export async function startDns(dir: string, p: Ports): Promise<Part> {
  const part = spawnLogged(dir, 'challtestsrv', BINARIES.challtestsrv, [
    '-dns01',
    `127.0.0.1:${p.dns}`,
    '-http01',
    '',
    '-https01',
    '',
    '-tlsalpn01',
    '',
    '-management',
    `127.0.0.1:${p.dnsManagement}`,
    '-defaultIPv4',
    '127.0.0.1',
    '-defaultIPv6',
    '',
  ]);
  await waitUntil(
    part,
    'pebble-challtestsrv answering',
    async () => (await httpGet(p.dnsManagement, '/')) !== undefined,
  );
  return part;
}

/** pebble with real validation (sleeps and nonce rejections off); `ca` is its HTTPS certificate. */
export async function startPebble(dir: string, p: Ports, ca: string): Promise<Part> {
  const part = spawnLogged(
    dir,
    'pebble',
    BINARIES.pebble,
    ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${p.dns}`],
    {
      env: { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    },
  );
  await waitUntil(
    part,
    'pebble answering',
    async () => (await httpsText(`https://127.0.0.1:${p.pebble}/dir`, ca)) !== undefined,
  );
  return part;
}

/** HAProxy in the foreground (`-db`); serves once its stats page answers. */
export async function startHaproxy(dir: string, p: Ports): Promise<Part> {
  const part = spawnLogged(dir, 'haproxy', BINARIES.haproxy, ['-f', join(dir, 'haproxy.cfg'), '-db']);
  await waitUntil(part, 'haproxy serving', async () => (await httpGet(p.haproxyStats, '/'))?.status === 200);
  return part;
}

/** `switchboard start --config router-<n>.yaml`; serves once its /readyz answers 200. */
export async function startRouter(dir: string, n: number, adminPort: number): Promise<Part> {
  const part = spawnLogged(dir, `router-${n}`, process.execPath, [
    join(REPO, 'bin/switchboard.js'),
    'start',
    '--config',
    join(dir, `router-${n}.yaml`),
  ]);
  await waitUntil(part, `router-${n} ready`, async () => (await httpGet(adminPort, '/readyz'))?.status === 200, 60_000);
  return part;
}
