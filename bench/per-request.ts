/**
 * Keep-alive small requests through `routing: per-request` and `routing: per-connection`,
 * against a bare Node pipe, in the same run (issue 6 benchmark). Standalone:
 *
 *   node bench/per-request.ts [--duration 5s] [--connections 64] [--profile]
 *
 * 1. A Node http backend answering a 2-byte body runs in this process; the router (each mode)
 *    and the bare pipe (accept, connect with noDelay, c.pipe(b).pipe(c), destroy both on
 *    error) each run in a child process of their own, so each gets a whole event loop.
 * 2. wrk (-t2 -c64 -d5s by default) measures each target in turn; the table shows requests/s
 *    and the ratios per-request/bare, per-request/per-connection (targets ≥ 0.75 and ≥ 0.8).
 * 3. `--profile` runs the per-request router under --cpu-prof and prints its top self-time
 *    functions, to show where the time goes.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const self = fileURLToPath(import.meta.url);

/** Child role: a bare pipe to 127.0.0.1:target; prints its port. */
async function servePipe(target: number): Promise<void> {
  const server = createServer({ noDelay: true }, (c) => {
    const b = connect({ port: target, host: '127.0.0.1', noDelay: true });
    const kill = () => {
      c.destroy();
      b.destroy();
    };
    c.on('error', kill);
    b.on('error', kill);
    c.pipe(b).pipe(c);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  console.log((server.address() as AddressInfo).port);
}

/** Child role: the router in `mode` in front of 127.0.0.1:target; prints its port. */
async function serveRouter(mode: string, target: number): Promise<void> {
  const { validateConfig } = await import('../app/load-config.ts');
  const { startLoaded } = await import('../app/start.ts');
  const { createLogger } = await import('../src/base/log.ts');
  const dir = await mkdtemp(join(tmpdir(), 'swb-bench-'));
  const file = join(dir, 'switchboard.yaml');
  await writeFile(join(dir, 'servers.yaml'), `- { host: "*", backends: [127.0.0.1:${target}] }\n`);
  const config = {
    listeners: [{ name: 'bench', address: '127.0.0.1:0' }],
    routing: mode,
    operator: 'round-robin',
    addressBook: { name: 'file', path: 'servers.yaml' },
    log: { level: 'silent', access: 'off' },
  };
  const loaded = await validateConfig(config, file, JSON.stringify(config));
  const router = await startLoaded(loaded, { logger: createLogger('silent'), accessLog: () => {} });
  const port = Object.values(router.panel.addresses())[0]?.port;
  console.log(port);
  process.on('SIGTERM', () => router.close().then(() => process.exit(0)));
}

function startChild(args: string[], nodeFlags: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...nodeFlags, self, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve({ child, port: Number(d.toString().trim()) }));
    child.once('error', reject);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((r) => {
    child.once('exit', () => r());
    child.kill('SIGTERM');
  });
}

async function wrk(port: number, duration: string, connections: number): Promise<number> {
  const { stdout } = await promisify(execFile)('wrk', [
    '-t2',
    `-c${connections}`,
    `-d${duration}`,
    '-H',
    'Host: bench.test',
    `http://127.0.0.1:${port}/`,
  ]);
  const m = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
  if (m === null) throw new Error(`wrk output not understood:\n${stdout}`);
  return Number(m[1]);
}

async function topFunctions(dir: string, n: number): Promise<string[]> {
  const file = (await readdir(dir)).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) return ['(no profile written)'];
  const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
  };
  const self = new Map<number, number>();
  for (const id of profile.samples) self.set(id, (self.get(id) ?? 0) + 1);
  const byName = new Map<string, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url === '' ? '' : ` ${url.replace(/^.*\/(src|panels|node_modules)\//, '$1/')}:${lineNumber + 1}`;
    const key = `${functionName || '(anonymous)'}${where}`;
    byName.set(key, (byName.get(key) ?? 0) + (self.get(node.id) ?? 0));
  }
  const total = profile.samples.length;
  return [...byName.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = (name: string, fallback: string) => {
    const i = args.indexOf(name);
    return i === -1 ? fallback : (args[i + 1] ?? fallback);
  };
  const duration = opt('--duration', '5s');
  const connections = Number(opt('--connections', '64'));
  const profile = args.includes('--profile');

  const backend = createHttpServer({ keepAliveTimeout: 60_000 }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
  const sockets = new Set<Socket>();
  backend.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', () => r()));
  const target = (backend.address() as AddressInfo).port;

  const results: Record<string, number> = {};
  let profileDir: string | undefined;
  for (const name of ['bare pipe', 'per-connection', 'per-request']) {
    const flags: string[] = [];
    if (profile && name === 'per-request') {
      profileDir = await mkdtemp(join(tmpdir(), 'swb-prof-'));
      flags.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
    }
    const role = name === 'bare pipe' ? ['--serve-pipe', String(target)] : ['--serve-router', name, String(target)];
    const { child, port } = await startChild(role, flags);
    await wrk(port, '1s', connections); // warm-up
    results[name] = await wrk(port, duration, connections);
    await stopChild(child);
    console.log(`${name.padEnd(15)} ${results[name]!.toFixed(0).padStart(8)} req/s`);
  }
  const pr = results['per-request']!;
  console.log(`per-request / bare pipe      = ${(pr / results['bare pipe']!).toFixed(3)}  (target ≥ 0.75)`);
  console.log(`per-request / per-connection = ${(pr / results['per-connection']!).toFixed(3)}  (target ≥ 0.8)`);
  if (profileDir !== undefined) {
    console.log('\nper-request router, top self time:');
    for (const line of await topFunctions(profileDir, 20)) console.log(line);
  }
  for (const s of sockets) s.destroy();
  backend.close();
}

const role = process.argv[2];
if (role === '--serve-pipe') await servePipe(Number(process.argv[3]));
else if (role === '--serve-router') await serveRouter(process.argv[3]!, Number(process.argv[4]));
else await main();
