/**
 * HTTP/2 benchmark: `h2load -c10 -m10` against one backend, directly and through four HTTP/2
 * front ends (the Node floor `node-h2-proxy`, Switchboard, HAProxy, nginx), in one run,
 * reported as requests/s and p99 latency plus ratios to the direct run and to each peer. Standalone: `node bench/http2.ts [--requests N] [--rounds R]`.
 *
 * 1. The backend (this process) answers `hello world` over h2c and HTTP/1.1 on one port
 *    (first bytes decide), so HAProxy and Switchboard proxy over h2c and nginx over HTTP/1.1
 *    (nginx cannot proxy HTTP/2 to a backend).
 * 2. Switchboard (`panel: http2`, cluster `protocol: h2c`), HAProxy (`bind … proto h2`,
 *    `server … proto h2`) and nginx (`listen … http2`) run as child processes on free ports;
 *    a peer missing from PATH is skipped.
 * 3. Each target gets a warm-up, then R rounds of N requests; the median round is reported.
 *    p99 comes from h2load's per-request log (`--log-file`).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createH2Server } from 'node:http2';
import { type AddressInfo, connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sniffPreface } from '../panels/http2/sniff.ts';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
const BODY = 'hello world\n';

interface Result {
  readonly rps: number;
  readonly p99Ms: number;
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Resolves once something accepts connections on `port` (generous limit). */
async function waitForPort(port: number, what: string): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    const ok = await new Promise<boolean>((r) => {
      const s = connect({ port, host: '127.0.0.1' }, () => {
        s.destroy();
        r(true);
      });
      s.on('error', () => r(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`${what} did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The backend: h2c and HTTP/1.1 on one port. */
async function startBackend(): Promise<{ port: number; close(): void }> {
  const answer = (_req: unknown, res: { writeHead(s: number, h: object): void; end(b: string): void }) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(BODY.length) });
    res.end(BODY);
  };
  const h2 = createH2Server({ settings: { maxConcurrentStreams: 1000 } }, answer as never);
  const h1 = createHttpServer({ keepAliveTimeout: 60_000 }, answer as never);
  const server = createNetServer((socket) => {
    sniffPreface(socket, (isH2) => (isH2 ? h2 : h1).emit('connection', socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

interface Target {
  readonly name: string;
  readonly bin: string | undefined;
  start(dir: string, port: number, backend: number): ChildProcess;
}

const has = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;

const TARGETS: readonly Target[] = [
  { name: 'direct', bin: undefined, start: () => undefined as unknown as ChildProcess },
  {
    name: 'switchboard',
    bin: process.execPath,
    start(dir, port, backend) {
      const conf = join(dir, 'switchboard.yaml');
      const text = [
        'panel: http2',
        `listeners: [ { name: web, address: "127.0.0.1:${port}" } ]`,
        'addressBook: { name: file, path: servers.yaml }',
        'log: { level: warn, access: "off" }',
      ].join('\n');
      spawnSync('sh', ['-c', `cat > ${conf}`], { input: text });
      spawnSync('sh', ['-c', `cat > ${join(dir, 'servers.yaml')}`], {
        input: `- { host: "*", backends: [127.0.0.1:${backend}], protocol: h2c }\n`,
      });
      return spawn(process.execPath, [join(ROOT, 'bin/switchboard.js'), 'start', '-c', conf], { stdio: 'inherit' });
    },
  },
  {
    // The Node floor (issue 18): a minimal node:http2 proxy, never tuned.
    name: 'node-h2-proxy',
    bin: process.execPath,
    start: (_dir, port, backend) =>
      spawn(process.execPath, [join(ROOT, 'bench/lib/h2-proxy-server.ts'), String(port), String(backend)], {
        stdio: 'inherit',
      }),
  },
  {
    name: 'haproxy',
    bin: 'haproxy',
    start(dir, port, backend) {
      const conf = join(dir, 'haproxy.cfg');
      const text = [
        'global',
        '  maxconn 4000',
        'defaults',
        '  mode http',
        '  timeout connect 5s',
        '  timeout client 60s',
        '  timeout server 60s',
        'frontend fe',
        `  bind 127.0.0.1:${port} proto h2`,
        '  default_backend be',
        'backend be',
        `  server s1 127.0.0.1:${backend} proto h2`,
      ].join('\n');
      spawnSync('sh', ['-c', `cat > ${conf}`], { input: `${text}\n` });
      return spawn('haproxy', ['-f', conf], { stdio: 'inherit' });
    },
  },
  {
    name: 'nginx',
    bin: 'nginx',
    start(dir, port, backend) {
      const conf = join(dir, 'nginx.conf');
      const text = `worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/nginx.err;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  upstream be { server 127.0.0.1:${backend}; keepalive 32; }
  server {
    listen 127.0.0.1:${port} http2;
    location / { proxy_pass http://be; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`;
      spawnSync('sh', ['-c', `cat > ${conf}`], { input: text });
      return spawn('nginx', ['-c', conf, '-e', `${dir}/nginx.err`], { stdio: 'inherit' });
    },
  },
];

/** One h2load run: requests/s and p99 (ms) from its per-request log. */
async function h2load(port: number, requests: number, dir: string): Promise<Result> {
  const log = join(dir, 'h2load.log');
  // Asynchronous: the backend runs in this process and must keep answering meanwhile.
  const out = await new Promise<{ stdout: string }>((done) => {
    const child = spawn('h2load', ['-c10', '-m10', `-n${requests}`, `--log-file=${log}`, `http://127.0.0.1:${port}/`]);
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.on('close', () => done({ stdout }));
  });
  const rps = Number(/finished in [^,]+, ([\d.]+) req\/s/.exec(out.stdout)?.[1] ?? Number.NaN);
  if (!/(\d+) succeeded/.test(out.stdout) || /, 0 succeeded/.test(out.stdout))
    throw new Error(`h2load failed:\n${out.stdout}`);
  // Columns: start time (µs since epoch), status, duration (µs).
  const durations = (await readFile(log, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => Number(l.split('\t')[2]))
    .filter((n) => Number.isFinite(n))
    .sort((a, b) => a - b);
  const p99 = durations[Math.min(durations.length - 1, Math.floor(durations.length * 0.99))] ?? Number.NaN;
  return { rps, p99Ms: p99 / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? Number.NaN;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { requests: { type: 'string' }, rounds: { type: 'string' } } });
  const requests = Number(values.requests ?? 50_000);
  const rounds = Number(values.rounds ?? 3);
  if (!has('h2load')) throw new Error('h2load is not installed (Debian: nghttp2-client)');
  const dir = await mkdtemp(join(tmpdir(), 'swb-bench-h2-'));
  const backend = await startBackend();
  const results = new Map<string, Result>();
  try {
    for (const t of TARGETS) {
      if (t.bin !== undefined && t.bin !== process.execPath && !has(t.bin)) {
        console.log(`skip ${t.name}: ${t.bin} not installed`);
        continue;
      }
      const port = t.name === 'direct' ? backend.port : await freePort();
      const child = t.name === 'direct' ? undefined : t.start(dir, port, backend.port);
      try {
        await waitForPort(port, t.name);
        await h2load(port, Math.min(5_000, requests), dir); // warm-up
        const runs: Result[] = [];
        for (let r = 0; r < rounds; r++) runs.push(await h2load(port, requests, dir));
        results.set(t.name, { rps: median(runs.map((x) => x.rps)), p99Ms: median(runs.map((x) => x.p99Ms)) });
      } finally {
        child?.kill('SIGTERM');
        if (child !== undefined) await new Promise((r) => child.once('exit', r));
      }
    }
  } finally {
    backend.close();
    await rm(dir, { recursive: true, force: true });
  }
  const names = [...results.keys()];
  console.log(`\nh2load -c10 -m10 -n${requests}, median of ${rounds} rounds`);
  console.log(
    ['target', 'req/s', 'p99 ms', ...names.map((n) => `rps÷${n}`), ...names.map((n) => `p99÷${n}`)].join('\t'),
  );
  for (const [name, r] of results) {
    const rpsRatios = names.map((n) => (r.rps / results.get(n)!.rps).toFixed(2));
    const p99Ratios = names.map((n) => (r.p99Ms / results.get(n)!.p99Ms).toFixed(2));
    console.log([name, r.rps.toFixed(0), r.p99Ms.toFixed(2), ...rpsRatios, ...p99Ratios].join('\t'));
  }
  await writeFile(
    join(ROOT, 'bench', 'results', 'http2.json'),
    JSON.stringify(Object.fromEntries(results), null, 2),
  ).catch(() => {});
}

await main();
