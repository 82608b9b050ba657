/**
 * `node bench/worker.ts [--duration S] [--connections N]`: the scaling curve of the `worker`
 * panel. Rows: `net` panel, `worker` with 1, 2 and 4 threads, HAProxy `nbthread` 1/2/4 (when
 * installed), all forwarding to the same backend (bench/lib/backend.ts). Columns: keep-alive
 * (requests on open connections) and churn (`Connection: close`, a new connection per request),
 * in requests per second, with each row's ratio to `net` / HAProxy nbthread 1. Results go to
 * stdout and bench/results/worker.md.
 *
 * Reading it: on a machine with C cores, the load generator takes one, so the threads beyond
 * C − 1 share cores with it and the curve flattens there; the shape up to that point is what
 * larger machines extend.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startBackend } from './lib/backend.ts';
import { defaultLoadgen, runLoad } from './lib/loadgen.ts';
import { switchboardServers } from './lib/peers.ts';
import { createSpawner, freePort, waitForPort, which } from './lib/proc.ts';
import { SMALL_PATH } from './lib/scenarios-shared.ts';
import { ROOT } from './lib/targets.ts';
import type { Running, Spawner } from './lib/types.ts';

interface Row {
  readonly name: string;
  readonly start: () => Promise<Running>;
}

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '64' } },
});
const durationSec = Number(values.duration);
const connections = Number(values.connections);

function switchboardConf(port: number, panel: string): string {
  return `panel: ${panel}
listeners:
  - { name: bench, address: 127.0.0.1:${port} }
routing: per-connection
limits: { idleTimeout: 300s, maxConnections: 9000, drainTimeout: 1s }
operator: { name: round-robin }
addressBook: { name: file, path: servers.yaml }
log: { level: warn, access: "off" }
`;
}

function haproxyConf(threads: number, port: number, backendPort: number): string {
  return `global
  nbthread ${threads}
  maxconn 9000
defaults
  mode tcp
  timeout connect 5s
  timeout client 300s
  timeout server 300s
frontend f
  bind 127.0.0.1:${port}
  default_backend b
backend b
  server s1 127.0.0.1:${backendPort}
`;
}

async function startSwitchboard(spawn: Spawner, dir: string, backendPort: number, panel: string): Promise<Running> {
  const port = await freePort();
  const home = join(dir, `switchboard-${port}`);
  await mkdir(home, { recursive: true });
  const config = join(home, 'switchboard.yaml');
  await writeFile(config, switchboardConf(port, panel));
  await writeFile(join(home, 'servers.yaml'), switchboardServers(backendPort));
  const bin = join(ROOT, 'bin', 'switchboard.js');
  const child = spawn.start(process.execPath, [bin, 'start', '--config', config], { cwd: home });
  await waitForPort(port, child, `switchboard ${panel}`);
  return { port, pids: () => [child.pid], stop: () => child.stop() };
}

async function startHaproxy(spawn: Spawner, dir: string, backendPort: number, threads: number): Promise<Running> {
  const port = await freePort();
  const file = join(dir, `haproxy-${threads}.cfg`);
  await writeFile(file, haproxyConf(threads, port, backendPort));
  const child = spawn.start(which('haproxy') as string, ['-f', file, '-db']);
  await waitForPort(port, child, `haproxy nbthread ${threads}`);
  return { port, pids: () => [child.pid], stop: () => child.stop() };
}

async function main(): Promise<void> {
  const spawn = createSpawner();
  const dir = await mkdtemp(join(tmpdir(), 'swb-bench-worker-'));
  const loadgen = defaultLoadgen();
  try {
    const backend = await startBackend(dir, spawn);
    const rows: Row[] = [
      { name: 'net', start: () => startSwitchboard(spawn, dir, backend.port, 'net') },
      ...[1, 2, 4].map((n) => ({
        name: `worker ×${n}`,
        start: () => startSwitchboard(spawn, dir, backend.port, `{ name: worker, threads: ${n} }`),
      })),
    ];
    if (which('haproxy') !== undefined) {
      for (const n of [1, 2, 4])
        rows.push({ name: `haproxy nbthread ${n}`, start: () => startHaproxy(spawn, dir, backend.port, n) });
    }
    const results: { name: string; keepAlive: number; churn: number }[] = [];
    for (const row of rows) {
      const running = await row.start();
      const url = `http://127.0.0.1:${running.port}${SMALL_PATH}`;
      // A short warm-up so JIT and connection pools are in place before measuring.
      await runLoad({ url, connections, durationSec: 1, close: false }, loadgen, spawn);
      const keepAlive = await runLoad({ url, connections, durationSec, close: false }, loadgen, spawn);
      const churn = await runLoad({ url, connections, durationSec, close: true }, loadgen, spawn);
      await running.stop();
      results.push({ name: row.name, keepAlive: keepAlive.rps, churn: churn.rps });
      console.error(`${row.name}: keep-alive ${keepAlive.rps.toFixed(0)} rps, churn ${churn.rps.toFixed(0)} rps`);
    }
    const base = (prefix: string) => results.find((r) => r.name === prefix);
    const lines = [
      `# worker panel scaling (${availableParallelism()} cores, ${loadgen}, ${connections} connections, ${durationSec}s, backend ${backend.kind})`,
      '',
      '| target | keep-alive rps | × baseline | churn rps | × baseline |',
      '|---|---:|---:|---:|---:|',
      ...results.map((r) => {
        const b = r.name.startsWith('haproxy') ? base('haproxy nbthread 1') : base('net');
        const ratio = (x: number, y: number | undefined) => (y ? (x / y).toFixed(2) : '–');
        return `| ${r.name} | ${r.keepAlive.toFixed(0)} | ${ratio(r.keepAlive, b?.keepAlive)} | ${r.churn.toFixed(0)} | ${ratio(r.churn, b?.churn)} |`;
      }),
      '',
    ];
    const text = lines.join('\n');
    console.log(text);
    await mkdir(join(ROOT, 'bench', 'results'), { recursive: true });
    await writeFile(join(ROOT, 'bench', 'results', 'worker.md'), text);
    await backend.stop();
  } finally {
    await spawn.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
