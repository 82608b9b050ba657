/**
 * New TLS connections per second through TLS passthrough (issue 8), as ratios in one run:
 *
 *   client (this process, full handshakes, no resumption) ──► target ──► TLS backend (child)
 *     targets: direct (no proxy) · bare Node pipe (no peek) · HAProxy TCP mode on req.ssl_sni
 *              · Switchboard net panel (peek ClientHello, route by SNI, splice)
 *
 * Each connection: handshake, read the backend's 3-byte reply, close. Target ≥ 0.9 × the pipe.
 * Usage: node bench/tls-passthrough.ts [--seconds 4] [--concurrency 32] [--rounds 3]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { parseArgs } from 'node:util';
import { createPki } from '../test/harness/certs.ts';

const { values } = parseArgs({
  options: { seconds: { type: 'string' }, concurrency: { type: 'string' }, rounds: { type: 'string' } },
});
const ROUNDS = Number(values.rounds ?? 3);
const SECONDS = Number(values.seconds ?? 4);
const CONCURRENCY = Number(values.concurrency ?? 32);
const SNI = 'bench.example.test';
const ROOT = join(import.meta.dirname, '..');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Spawns a child and resolves once `port` accepts connections. */
async function start(cmd: string, args: string[], port: number): Promise<ChildProcess> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'], cwd: ROOT });
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = netConnect(port, '127.0.0.1');
      s.on('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  throw new Error(`${cmd} did not listen on ${port}`);
}

/** Runs CONCURRENCY loops of connect → handshake → read → close for SECONDS; returns conn/s. */
async function measure(port: number): Promise<number> {
  let done = 0;
  let failed = 0;
  const until = performance.now() + SECONDS * 1000;
  const one = () =>
    new Promise<void>((resolve) => {
      const s = connect({ port, host: '127.0.0.1', servername: SNI, rejectUnauthorized: false });
      s.on('data', () => {});
      s.on('end', () => {
        done++;
        s.destroy();
      });
      s.on('error', () => failed++);
      s.on('close', () => resolve());
    });
  const loop = async () => {
    while (performance.now() < until) await one();
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const rate = done / ((performance.now() - t0) / 1000);
  if (failed > 0) console.error(`  (${failed} failed connections)`);
  return rate;
}

const BACKEND = `
const tls = require('node:tls'); const fs = require('node:fs');
const [cert, key, port] = process.argv.slice(1);
tls.createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, (s) => { s.on('error', () => {}); s.end('ok\\n'); })
  .on('tlsClientError', () => {}).listen(Number(port), '127.0.0.1');`;

const PIPE = `
const net = require('node:net'); const [port, target] = process.argv.slice(1).map(Number);
net.createServer((c) => { const u = net.connect(target, '127.0.0.1'); c.pipe(u).pipe(c);
  c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); }).listen(port, '127.0.0.1');`;

async function main(): Promise<void> {
  const pki = await createPki('Bench CA');
  const dir = await mkdtemp(join(tmpdir(), 'swb-bench-tls-'));
  const leaf = await pki.leaf('bench', { dns: [SNI] });
  const children: ChildProcess[] = [];
  try {
    const backendPort = await freePort();
    children.push(
      await start(process.execPath, ['-e', BACKEND, leaf.cert, leaf.key, String(backendPort)], backendPort),
    );

    const pipePort = await freePort();
    children.push(await start(process.execPath, ['-e', PIPE, String(pipePort), String(backendPort)], pipePort));

    const haPort = await freePort();
    const haCfg = join(dir, 'haproxy.cfg');
    await writeFile(
      haCfg,
      [
        'global',
        '  maxconn 4000',
        'defaults',
        '  mode tcp',
        '  timeout connect 2s',
        '  timeout client 60s',
        '  timeout server 60s',
        'frontend fe',
        `  bind 127.0.0.1:${haPort}`,
        '  tcp-request inspect-delay 5s',
        '  tcp-request content accept if { req.ssl_hello_type 1 }',
        `  use_backend be if { req.ssl_sni -i ${SNI} }`,
        'backend be',
        `  server b1 127.0.0.1:${backendPort}`,
        '',
      ].join('\n'),
    );
    let haproxy = true;
    try {
      children.push(await start('haproxy', ['-f', haCfg, '-db'], haPort));
    } catch {
      haproxy = false;
    }

    const swbPort = await freePort();
    const swbCfg = join(dir, 'switchboard.yaml');
    await writeFile(
      swbCfg,
      [
        'listeners:',
        `  - { name: tls, address: "127.0.0.1:${swbPort}", tls: passthrough }`,
        'log: { level: warn, access: "off" }',
        'addressBook:',
        '  name: bfe',
        '  products:',
        `    p: { hosts: ["${SNI}"], rules: [{ cond: "default_t()", cluster: c }] }`,
        '  clusters:',
        `    c: { subclusters: { s: { weight: 1, backends: [{ address: "127.0.0.1:${backendPort}" }] } } }`,
        '',
      ].join('\n'),
    );
    children.push(await start(process.execPath, ['bin/switchboard.js', 'start', '-c', swbCfg], swbPort));

    const targets: [string, number][] = [
      ['direct (no proxy)', backendPort],
      ['bare Node pipe', pipePort],
      ...(haproxy ? ([['haproxy tcp req.ssl_sni', haPort]] as [string, number][]) : []),
      ['switchboard passthrough', swbPort],
    ];
    await measure(swbPort); // warm-up (JIT, first contexts)
    // Interleaved rounds, median per target: drift on a shared machine hits every target alike.
    const samples = new Map<string, number[]>(targets.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, port] of targets) samples.get(name)!.push(await measure(port));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rates = new Map([...samples].map(([name, xs]) => [name, median(xs)]));
    const pipe = rates.get('bare Node pipe') ?? 1;
    console.log(`new TLS connections/s, ${CONCURRENCY} concurrent, median of ${ROUNDS} × ${SECONDS}s`);
    for (const [name, rate] of rates) {
      console.log(`  ${name.padEnd(26)} ${rate.toFixed(0).padStart(7)} conn/s   ${(rate / pipe).toFixed(2)} × pipe`);
    }
  } finally {
    for (const c of children) c.kill();
    await rm(dir, { recursive: true, force: true });
    await pki.close();
  }
}

await main();
