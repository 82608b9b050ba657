/**
 * The soak (issue 13 §4): the real CLI in a child process under mixed traffic for a bounded time,
 * with config reloads and backend restarts, then its RSS, descriptors and errors are accounted.
 *
 * 1. Two HTTP backends (plain requests, uploads, WebSocket echo) and one h2c backend listen on
 *    fixed loopback ports so a restart comes back on the same address.
 * 2. The router runs `bin/switchboard.js start` (net panel, per-request routing) with its access
 *    log in a file; a reload rewrites the config (a comment changes, so it is not a no-op) and
 *    sends SIGHUP; a restart closes one HTTP backend and listens again a moment later.
 * 3. Traffic loops run until the deadline: keep-alive GETs, a new connection per GET (churn),
 *    256 KiB uploads checked byte for byte, WebSocket echo sessions, h2c streams.
 * 4. Errors seen by a client within a restart window (±2 s) are explained by it; any other is
 *    unexplained. RSS and descriptors are read from /proc after warm-up and after traffic stops.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { Agent, createServer, request, type Server } from 'node:http';
import { createServer as createH2Server, connect as h2connect } from 'node:http2';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket, WebSocketServer } from 'ws';
import { spawnCli } from '../harness/cli.ts';
import { freePort } from '../harness/haproxy.ts';
import { tempDir } from '../harness/router.ts';

/** Soak settings. */
export interface SoakOptions {
  readonly durationMs: number;
  readonly reloadEveryMs: number;
  readonly restartEveryMs: number;
  readonly warmupMs: number;
}

/** What a soak measured. */
export interface SoakReport {
  readonly requests: Record<string, number>;
  readonly errors: { readonly explained: Record<string, number>; readonly unexplained: string[] };
  readonly reloads: number;
  readonly restarts: number;
  readonly rss: { readonly warm: number; readonly after: number };
  readonly fds: { readonly start: number; readonly warm: number; readonly after: number };
  readonly accessResults: Record<string, number>;
}

/** An HTTP backend (GET, upload byte count, WebSocket echo) that can be restarted on its port. */
class RestartableBackend {
  readonly port: number;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  constructor(port: number) {
    this.port = port;
  }
  async start(): Promise<void> {
    const server = createServer((req, res) => {
      let n = 0;
      req.on('data', (c: Buffer) => (n += c.length));
      req.on('end', () => res.end(String(n)));
    });
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', (m, binary) => ws.send(m, { binary })));
    server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(this.port, '127.0.0.1', () => r()));
    this.#server = server;
  }
  async stop(): Promise<void> {
    const s = this.#server;
    this.#server = undefined;
    for (const sock of this.#sockets) sock.destroy();
    if (s !== undefined) await new Promise((r) => s.close(r));
  }
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}
const fdsOf = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

function configText(access: string, n: number): string {
  return [
    `# reload ${n}`,
    'listeners: [{ name: web, address: "127.0.0.1:0" }]',
    'routing: per-request',
    'limits: { drainTimeout: 2s, idleTimeout: 20s }',
    'operator: round-robin',
    'addressBook: { name: file, path: servers.yaml }',
    `log: { level: info, access: ${JSON.stringify(access)} }`,
    '',
  ].join('\n');
}

/** Runs one soak and returns its figures (the router and backends are gone when it resolves). */
export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const [pa, pb, ph2] = [await freePort(), await freePort(), await freePort()];
  const backends = [new RestartableBackend(pa), new RestartableBackend(pb)];
  for (const b of backends) await b.start();
  const h2 = createH2Server();
  h2.on('stream', (stream) => {
    stream.respond({ ':status': 200 });
    stream.end('h2c');
  });
  await new Promise<void>((r) => h2.listen(ph2, '127.0.0.1', () => r()));
  const dir = await tempDir({
    'servers.yaml': [
      `- { host: h2c.test, backends: [127.0.0.1:${ph2}] }`,
      `- { host: "*", backends: [127.0.0.1:${pa}, 127.0.0.1:${pb}] }`,
      '',
    ].join('\n'),
  });
  const access = join(dir, 'access.log');
  const file = join(dir, 'switchboard.yaml');
  let reloads = 0;
  await writeFile(file, configText(access, 0));
  const cli = spawnCli(file);
  const pid = cli.child.pid ?? 0;
  const port = await cli.port('web');
  const startFds = fdsOf(pid);

  const requests: Record<string, number> = {};
  const failures: { kind: string; at: number; message: string }[] = [];
  const restarts: { from: number; to: number }[] = [];
  const deadline = Date.now() + o.durationMs;
  const count = (k: string) => (requests[k] = (requests[k] ?? 0) + 1);
  const loop = async (kind: string, once: () => Promise<void>) => {
    while (Date.now() < deadline) {
      try {
        await once();
        count(kind);
      } catch (e) {
        failures.push({ kind, at: Date.now(), message: (e as Error).message });
        await sleep(20);
      }
    }
  };
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 4 });
  const get = (host: string, agent: Agent | false, body?: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        { port, host: '127.0.0.1', method: body ? 'POST' : 'GET', path: '/', headers: { host }, agent },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => {
            if (res.statusCode !== 200)
              reject(new Error(`status ${res.statusCode} ${res.headers['x-switchboard-error'] ?? ''}`));
            else if (body !== undefined && Number(text) !== body.length)
              reject(new Error(`upload: backend got ${text}`));
            else resolve();
          });
          res.on('error', reject);
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error('request timeout')));
      req.on('error', reject);
      req.end(body);
    });
  const upload = Buffer.alloc(256 * 1024, 0x75);
  const ws = () =>
    new Promise<void>((resolve, reject) => {
      const sock = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { host: 'ws.test' } });
      let echoed = 0;
      sock.on('open', () => sock.send('m0'));
      sock.on('message', (m) => {
        if (String(m) !== `m${echoed}`) return reject(new Error(`ws: echo ${String(m)}`));
        if (++echoed === 10) sock.close();
        else sock.send(`m${echoed}`);
      });
      sock.on('close', () => (echoed === 10 ? resolve() : reject(new Error(`ws: closed after ${echoed}`))));
      sock.on('error', reject);
    });
  const h2c = () =>
    new Promise<void>((resolve, reject) => {
      const session = h2connect(`http://127.0.0.1:${port}`);
      session.on('error', reject);
      let done = 0;
      for (let i = 0; i < 5; i++) {
        const s = session.request({ ':path': '/', ':authority': 'h2c.test' });
        let text = '';
        s.on('data', (c: Buffer) => (text += c.toString()));
        s.on('error', reject);
        s.on('end', () => {
          if (text !== 'h2c') reject(new Error(`h2c: ${text}`));
          if (++done === 5) {
            session.close();
            resolve();
          }
        });
        s.end();
      }
    });

  const chores = (async () => {
    let nextReload = Date.now() + o.reloadEveryMs;
    let nextRestart = Date.now() + o.restartEveryMs;
    let which = 0;
    while (Date.now() < deadline) {
      await sleep(100);
      if (Date.now() >= nextReload) {
        nextReload += o.reloadEveryMs;
        reloads++;
        await writeFile(file, configText(access, reloads));
        cli.child.kill('SIGHUP');
      }
      if (Date.now() >= nextRestart) {
        nextRestart += o.restartEveryMs;
        const b = backends[which++ % 2]!;
        const from = Date.now();
        await b.stop();
        await sleep(500);
        await b.start();
        restarts.push({ from, to: Date.now() });
      }
    }
  })();
  let warm = { rss: 0, fds: 0 };
  const warmup = (async () => {
    await sleep(o.warmupMs);
    warm = { rss: rssOf(pid), fds: fdsOf(pid) };
  })();
  await Promise.all([
    loop('keep-alive', () => get('ka.test', keepAlive)),
    loop('keep-alive', () => get('ka.test', keepAlive)),
    loop('churn', () => get('churn.test', false)),
    loop('upload', () => get('up.test', keepAlive, upload)),
    loop('websocket', ws),
    loop('h2c', h2c),
    chores,
    warmup,
  ]);
  keepAlive.destroy();
  // Idle now: give the router time to close what the clients closed, then read its figures.
  let after = { rss: rssOf(pid), fds: fdsOf(pid) };
  const until = Date.now() + 15_000;
  while (after.fds > startFds && Date.now() < until) {
    await sleep(200);
    after = { rss: rssOf(pid), fds: fdsOf(pid) };
  }
  cli.kill('SIGTERM');
  await cli.exited;
  for (const b of backends) await b.stop();
  await new Promise((r) => h2.close(r));

  const explained: Record<string, number> = {};
  const unexplained: string[] = [];
  for (const f of failures) {
    if (restarts.some((r) => f.at >= r.from - 2000 && f.at <= r.to + 2000))
      explained[`${f.kind}: backend restart`] = (explained[`${f.kind}: backend restart`] ?? 0) + 1;
    else unexplained.push(`${f.kind}: ${f.message}`);
  }
  const accessResults: Record<string, number> = {};
  for (const line of (await readFile(access, 'utf8').catch(() => '')).split('\n')) {
    if (line === '') continue;
    const r = (JSON.parse(line) as { result?: string }).result ?? '?';
    accessResults[r] = (accessResults[r] ?? 0) + 1;
  }
  return {
    requests,
    errors: { explained, unexplained },
    reloads,
    restarts: restarts.length,
    rss: { warm: warm.rss, after: after.rss },
    fds: { start: startFds, warm: warm.fds, after: after.fds },
    accessResults,
  };
}
