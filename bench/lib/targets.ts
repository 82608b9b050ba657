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
export async function startNode(ctx: BenchContext, name: string, script: string, args: (port: number) => string[]) {
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

/** Starts HAProxy with the config `conf(port)` on a fresh port. */
export async function startHaproxy(ctx: BenchContext, name: string, conf: (port: number) => string): Promise<Running> {
  const port = await freePort();
  const file = join(ctx.dir, `${name}-${port}.cfg`);
  await writeFile(file, conf(port));
  const child = ctx.spawn.start(which('haproxy') as string, ['-f', file, '-db']);
  await waitForPort(port, child, name);
  return { port, pids: () => [child.pid], stop: () => child.stop() };
}

/** `available()` for a target that needs `binary` on PATH. */
export const needs = (binary: string) => () => (which(binary) === undefined ? `${binary} is not installed` : undefined);
const nginxStream = () =>
  needs('nginx')() ?? (existsSync(nginxStreamModule) ? undefined : 'nginx stream module missing');

/** Starts `bin/switchboard.js start` (from `root`) with the config `conf(port)` and file book `servers`. */
export async function startSwitchboard(
  ctx: BenchContext,
  name: string,
  conf: (port: number) => string,
  servers: string,
  root: string = ROOT,
  args: readonly string[] = [],
): Promise<Running> {
  const port = await freePort();
  const dir = join(ctx.dir, `${name}-${port}`);
  await mkdir(dir, { recursive: true });
  const config = join(dir, 'switchboard.yaml');
  await writeFile(config, conf(port));
  await writeFile(join(dir, 'servers.yaml'), servers);
  const bin = join(root, 'bin', 'switchboard.js');
  const child = ctx.spawn.start(process.execPath, [...ctx.nodeFlags, bin, 'start', '--config', config, ...args], {
    cwd: dir,
  });
  await waitForPort(port, child, name);
  return { port, pids: () => [child.pid], stop: () => child.stop() };
}

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
  const panel = workers === undefined ? [] : ['--panel', 'worker', '--workers', String(workers)];
  return {
    name,
    available: () => undefined,
    ...(workers === undefined ? {} : { loops: workers }),
    start: (ctx) =>
      startSwitchboard(ctx, name, (p) => switchboardConf(p, routing), switchboardServers(ctx.backendPort), root, panel),
  };
}

/** The scenarios the scaling rows (worker threads, HAProxy nbthread) take part in. */
export const SCALING = ['keepalive', 'newconn'] as const;

/** HAProxy in front of the HTTP/1 backend with `threads` threads. */
function haproxyTarget(name: string, mode: 'tcp' | 'http', threads = 1): Target {
  return {
    name,
    available: needs('haproxy'),
    start: (ctx) => startHaproxy(ctx, name, (p) => haproxyConf(mode, p, ctx.backendPort, threads)),
  };
}

/** A Node proxy from npm (`pkg` must be installed), run from bench/lib/`script` PORT BACKEND_PORT ...args. */
function nodeProxyTarget(name: string, pkg: string, script: string, args: readonly string[] = []): Target {
  return {
    name,
    available: () => (existsSync(join(ROOT, 'node_modules', pkg)) ? undefined : `${pkg} is not installed`),
    start: (ctx) => startNode(ctx, name, join(here, script), (p) => [String(p), String(ctx.backendPort), ...args]),
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
  // The floor of a router that reads before it connects (issue 18, newconn): optional rows.
  {
    name: 'node-peek-pipe',
    available: () => undefined,
    optional: true,
    start: (ctx) =>
      startNode(ctx, 'node-peek-pipe', join(here, 'peek-pipe-server.ts'), (p) => [String(p), String(ctx.backendPort)]),
  },
  {
    name: 'node-peek-parse-pipe',
    available: () => undefined,
    optional: true,
    start: (ctx) =>
      startNode(ctx, 'node-peek-parse-pipe', join(here, 'peek-pipe-server.ts'), (p) => [
        String(p),
        String(ctx.backendPort),
        'parse',
      ]),
  },
  // The floor of per-request routing (issue 18, keep-alive per-request): an optional row.
  {
    name: 'node-per-request-pipe',
    available: () => undefined,
    optional: true,
    start: (ctx) =>
      startNode(ctx, 'node-per-request-pipe', join(here, 'per-request-pipe-server.ts'), (p) => [
        String(p),
        String(ctx.backendPort),
      ]),
  },
  // What reused read buffers are worth in Node (issue 18, big): an optional row.
  {
    name: 'node-onread-pipe',
    available: () => undefined,
    optional: true,
    start: (ctx) =>
      startNode(ctx, 'node-onread-pipe', join(here, 'onread-pipe-server.ts'), (p) => [
        String(p),
        String(ctx.backendPort),
      ]),
  },
  nodeProxyTarget('node-http-proxy', 'http-proxy', 'http-proxy-server.ts'),
  nodeProxyTarget('http-proxy-3', 'http-proxy-3', 'http-proxy-server.ts', ['http-proxy-3']),
  nodeProxyTarget('fastify-http-proxy', '@fastify/http-proxy', 'fastify-proxy-server.ts'),
  haproxyTarget('haproxy-tcp', 'tcp'),
  haproxyTarget('haproxy-http', 'http'),
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
  // The worker panel's scaling curve (issue 11): keep-alive and churn only.
  { ...switchboardTarget('switchboard-worker-1', 'per-connection', ROOT, 1), scenarios: SCALING },
  { ...switchboardTarget('switchboard-worker-4', 'per-connection', ROOT, 4), scenarios: SCALING },
  { ...haproxyTarget('haproxy-tcp-nbthread-2', 'tcp', 2), scenarios: SCALING },
  { ...haproxyTarget('haproxy-tcp-nbthread-4', 'tcp', 4), scenarios: SCALING },
  // Before/after: SWB_BENCH_BASELINE=/path/to/other/checkout adds that tree's net rows (both
  // routing modes) beside this tree's, measured in the same run.
  ...(process.env.SWB_BENCH_BASELINE === undefined
    ? []
    : [
        switchboardTarget('switchboard-net@baseline', 'per-connection', resolve(process.env.SWB_BENCH_BASELINE)),
        switchboardTarget('switchboard-per-request@baseline', 'per-request', resolve(process.env.SWB_BENCH_BASELINE)),
      ]),
];
