/**
 * The targets, each a name plus start/stop (bench/lib/types.ts `Target`). To add a row (per-request
 * routing, TLS, HTTP/2, the worker panel), append one entry to `TARGETS`: `available()` returns
 * why it cannot run here (or undefined), `start(ctx)` returns the port and pids.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  haproxyConf,
  nginxHttpConf,
  nginxStreamConf,
  nginxStreamModule,
  switchboardConf,
  switchboardServers,
} from './peers.ts';
import { freePort, waitForPort, which } from './proc.ts';
import type { BenchContext, Running, Target } from './types.ts';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root (bench/lib/../..). */
export const ROOT = resolve(here, '..', '..');

/** Starts a Node script from bench/lib (or the repo) as its own process on a fresh port. */
async function startNode(ctx: BenchContext, name: string, script: string, args: (port: number) => string[]) {
  const port = await freePort();
  const child = ctx.spawn.start(process.execPath, [...ctx.nodeFlags, script, ...args(port)], { cwd: ctx.dir });
  await waitForPort(port, child, name);
  return { port, pids: () => [child.pid], stop: () => child.stop() } satisfies Running;
}

/** Starts nginx with `conf(dir, port)` in its own prefix folder. */
export async function startNginx(ctx: BenchContext, name: string, conf: (dir: string, port: number) => string) {
  const port = await freePort();
  const dir = join(ctx.dir, `${name}-${port}`);
  await mkdir(join(dir, 'logs'), { recursive: true });
  await writeFile(join(dir, 'nginx.conf'), conf(dir, port));
  const nginx = which('nginx') as string;
  const child = ctx.spawn.start(nginx, [
    '-p',
    dir,
    '-c',
    join(dir, 'nginx.conf'),
    '-g',
    `daemon off; master_process on; pid ${dir}/nginx.pid;`,
  ]);
  await waitForPort(port, child, name);
  return { port, pids: () => [child.pid], stop: () => child.stop() } satisfies Running;
}

async function startHaproxy(ctx: BenchContext, name: string, mode: 'tcp' | 'http'): Promise<Running> {
  const port = await freePort();
  const file = join(ctx.dir, `${name}.cfg`);
  await writeFile(file, haproxyConf(mode, port, ctx.backendPort));
  const child = ctx.spawn.start(which('haproxy') as string, ['-f', file, '-db']);
  await waitForPort(port, child, name);
  return { port, pids: () => [child.pid], stop: () => child.stop() };
}

const needs = (binary: string) => () => (which(binary) === undefined ? `${binary} is not installed` : undefined);
const nginxStream = () =>
  needs('nginx')() ?? (existsSync(nginxStreamModule) ? undefined : 'nginx stream module missing');

/**
 * Switchboard as a separate process (`bin/switchboard.js start`): the `net` panel, or the
 * `worker` panel with `workers` threads.
 */
export function switchboardTarget(
  name: string,
  routing: 'per-connection' | 'per-request',
  root: string = ROOT,
  workers?: number,
): Target {
  return {
    name,
    available: () => undefined,
    async start(ctx) {
      const port = await freePort();
      const dir = join(ctx.dir, `${name}-${port}`);
      await mkdir(dir, { recursive: true });
      const config = join(dir, 'switchboard.yaml');
      await writeFile(config, switchboardConf(port, routing));
      await writeFile(join(dir, 'servers.yaml'), switchboardServers(ctx.backendPort));
      const bin = join(root, 'bin', 'switchboard.js');
      const panel = workers === undefined ? [] : ['--panel', 'worker', '--workers', String(workers)];
      const child = ctx.spawn.start(process.execPath, [...ctx.nodeFlags, bin, 'start', '--config', config, ...panel], {
        cwd: dir,
      });
      await waitForPort(port, child, name);
      return { port, pids: () => [child.pid], stop: () => child.stop() };
    },
  };
}

/** Every target, in table order; the first two are the baselines ratios are taken against. */
export const TARGETS: readonly Target[] = [
  {
    name: 'direct',
    available: () => undefined,
    start: async (ctx) => ({ port: ctx.backendPort, pids: () => [...ctx.backendPids], stop: async () => {} }),
  },
  {
    name: 'node-pipe',
    available: () => undefined,
    start: (ctx) =>
      startNode(ctx, 'node-pipe', join(here, 'pipe-server.ts'), (p) => [String(p), String(ctx.backendPort)]),
  },
  {
    name: 'node-http-proxy',
    available: () => (existsSync(join(ROOT, 'node_modules', 'http-proxy')) ? undefined : 'http-proxy is not installed'),
    start: (ctx) =>
      startNode(ctx, 'node-http-proxy', join(here, 'http-proxy-server.ts'), (p) => [
        String(p),
        String(ctx.backendPort),
      ]),
  },
  { name: 'haproxy-tcp', available: needs('haproxy'), start: (ctx) => startHaproxy(ctx, 'haproxy-tcp', 'tcp') },
  { name: 'haproxy-http', available: needs('haproxy'), start: (ctx) => startHaproxy(ctx, 'haproxy-http', 'http') },
  {
    name: 'nginx-stream',
    available: nginxStream,
    start: (ctx) => startNginx(ctx, 'nginx-stream', (d, p) => nginxStreamConf(d, p, ctx.backendPort)),
  },
  {
    name: 'nginx-http',
    available: needs('nginx'),
    start: (ctx) => startNginx(ctx, 'nginx-http', (d, p) => nginxHttpConf(d, p, ctx.backendPort)),
  },
  switchboardTarget('switchboard-net', 'per-connection'),
  switchboardTarget('switchboard-per-request', 'per-request'),
  switchboardTarget('switchboard-worker-2', 'per-connection', ROOT, 2),
  // Before/after: SWB_BENCH_BASELINE=/path/to/other/checkout adds that tree as its own row.
  ...(process.env.SWB_BENCH_BASELINE === undefined
    ? []
    : [switchboardTarget('switchboard-net@baseline', 'per-connection', resolve(process.env.SWB_BENCH_BASELINE))]),
];
