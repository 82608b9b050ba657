/**
 * The soak (issue 13 §4): the real CLI in a child process under mixed traffic for a bounded time,
 * with config reloads and backend restarts, then its RSS, descriptors and errors are accounted.
 *
 * 1. Backends on fixed loopback ports (a restart comes back on the same address): two HTTP
 *    backends (plain requests, uploads, WebSocket echo), an h2c backend and a TLS echo backend.
 * 2. The router runs `bin/switchboard.js start` with the panel's CLI arguments (`net`, or
 *    `--panel worker --workers 2`) and three listeners: `web` (plaintext, per-request routing),
 *    `tls` (passthrough by SNI to the TLS backend) and `term` (TLS terminated with a certificate
 *    of the soak's CA, then HTTP routing inside). Its access log goes to a file.
 * 3. Traffic loops run until the deadline: keep-alive GETs, a new connection per GET (churn),
 *    256 KiB uploads checked by length, WebSocket echo sessions, h2c streams, TLS passthrough
 *    echo (verified handshake with the backend, 32 KiB echoed byte for byte) and keep-alive
 *    HTTPS GETs through the terminating listener.
 * 4. A reload rewrites the config (a comment changes, so it is not a no-op) and sends SIGHUP; a
 *    restart stops one backend (HTTP a, HTTP b, TLS in turn) and starts it again 500 ms later.
 * 5. Errors seen by a client within a restart window (±2 s) are explained by it; any other is
 *    unexplained. Descriptors and RSS (the whole process, every thread) are read from /proc at
 *    start, once warm-up has passed (RSS: the highest of three readings 3 s apart), and once
 *    traffic has stopped and the descriptors have come back. Each RSS figure is the median of several readings right after a full GC forced in
 *    every thread through the inspector (gc.ts): a step in uncollected garbage (old engines
 *    released by keep-alive connections after reloads, V8 growing a heap) is not a leak.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPki } from '../harness/certs.ts';
import { freePort } from '../harness/haproxy.ts';
import { tempDir } from '../harness/router.ts';
import { h2cBackend, httpBackend, type Restartable, tlsEchoBackend } from './backends.ts';
import { connectGc } from './gc.ts';
import { fdsOf, medianOf, rssOf, startRouterProcess } from './process.ts';
import { h2cSession, httpExchange, tlsEcho, wsSession } from './traffic.ts';

/** The panels a soak can run through, with the CLI arguments that select them. */
export const PANELS = { net: [], worker: ['--panel', 'worker', '--workers', '2'] } as const;

/** Soak settings. */
export interface SoakOptions {
  readonly panel: keyof typeof PANELS;
  readonly durationMs: number;
  readonly reloadEveryMs: number;
  readonly restartEveryMs: number;
  readonly warmupMs: number;
}

/** What a soak measured. */
export interface SoakReport {
  readonly panel: string;
  readonly durationMs: number;
  readonly requests: Record<string, number>;
  readonly errors: { readonly explained: Record<string, number>; readonly unexplained: string[] };
  readonly reloads: number;
  readonly restarts: number;
  readonly rss: { readonly start: number; readonly warm: number; readonly after: number };
  readonly fds: { readonly start: number; readonly warm: number; readonly after: number };
  readonly accessResults: Record<string, number>;
}

/** The kinds of traffic every soak must have carried. */
export const KINDS = ['keep-alive', 'churn', 'upload', 'websocket', 'h2c', 'tls-passthrough', 'tls-terminate'];

function configText(access: string, n: number): string {
  return [
    `# reload ${n}`,
    'listeners:',
    '  - { name: web, address: "127.0.0.1:0" }',
    '  - { name: tls, address: "127.0.0.1:0", tls: passthrough }',
    '  - { name: term, address: "127.0.0.1:0", tls: terminate, certificates: [{ cert: router.crt, key: router.key }] }',
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
  const pki = await createPki();
  const backendCert = await pki.leaf('backend', { dns: ['tls.test'] });
  const routerCert = await pki.leaf('router', { dns: ['term.test'] });
  const [pa, pb, ph2, ptls] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const restartable: Restartable[] = [
    httpBackend('a', pa),
    httpBackend('b', pb),
    tlsEchoBackend('tls', ptls, backendCert),
  ];
  const h2 = h2cBackend('h2c', ph2);
  for (const b of [...restartable, h2]) await b.start();
  const dir = await tempDir({
    'servers.yaml': [
      `- { host: h2c.test, protocol: h2c, backends: [127.0.0.1:${ph2}] }`,
      `- { host: tls.test, backends: [127.0.0.1:${ptls}] }`,
      `- { host: "*", backends: [127.0.0.1:${pa}, 127.0.0.1:${pb}] }`,
      '',
    ].join('\n'),
    'router.crt': routerCert.certPem,
    'router.key': routerCert.keyPem,
  });
  const access = join(dir, 'access.log');
  const file = join(dir, 'switchboard.yaml');
  let reloads = 0;
  await writeFile(file, configText(access, 0));
  const router = startRouterProcess(file, PANELS[o.panel]);
  const { pid } = router;
  const [port, tlsPort, termPort] = [await router.port('web'), await router.port('tls'), await router.port('term')];
  await router.waitForLog((l) => l.msg === 'switchboard started');
  const gc = await connectGc(await router.inspector());
  // RSS right after a full GC in every thread, median of several readings: what is retained.
  const rssAfterGc = async () => {
    await gc.collect();
    return medianOf(() => rssOf(pid), 5, 300);
  };
  const start = { rss: await rssAfterGc(), fds: fdsOf(pid) };

  const requests: Record<string, number> = {};
  const failures: { kind: string; at: number; message: string }[] = [];
  const restarts: { from: number; to: number }[] = [];
  const deadline = Date.now() + o.durationMs;
  const loop = async (kind: string, once: () => Promise<void>) => {
    while (Date.now() < deadline) {
      try {
        await once();
        requests[kind] = (requests[kind] ?? 0) + 1;
      } catch (e) {
        failures.push({ kind, at: Date.now(), message: (e as Error).message });
        await sleep(20);
      }
    }
  };
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 4 });
  const httpsKeepAlive = new HttpsAgent({ keepAlive: true, maxSockets: 2 });
  const term = { ca: pki.ca.certPem, servername: 'term.test' };
  const upload = Buffer.alloc(256 * 1024, 0x75);

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
        router.kill('SIGHUP');
      }
      if (Date.now() >= nextRestart) {
        nextRestart += o.restartEveryMs;
        const b = restartable[which++ % restartable.length]!;
        const from = Date.now();
        await b.stop();
        await sleep(500);
        await b.start();
        restarts.push({ from, to: Date.now() });
      }
    }
  })();
  // The warm level: the highest of three readings 3 s apart from the end of warm-up. RSS after a
  // full GC moves by up to ~15% between readings of one steady process (whether V8 and malloc
  // have handed pages back yet); one low reading taken as the level made `after` look like growth.
  let warm = { rss: 0, fds: 0 };
  const warmup = (async () => {
    await sleep(o.warmupMs);
    warm = { rss: await rssAfterGc(), fds: fdsOf(pid) };
    for (let i = 0; i < 2 && Date.now() + 3_000 < deadline; i++) {
      await sleep(3_000);
      warm = { rss: Math.max(warm.rss, await rssAfterGc()), fds: warm.fds };
    }
  })();
  await Promise.all([
    loop('keep-alive', () => httpExchange(port, 'ka.test', keepAlive)),
    loop('keep-alive', () => httpExchange(port, 'ka.test', keepAlive)),
    loop('churn', () => httpExchange(port, 'churn.test', false)),
    loop('upload', () => httpExchange(port, 'up.test', keepAlive, upload)),
    loop('websocket', () => wsSession(port)),
    loop('h2c', () => h2cSession(port)),
    loop('tls-passthrough', () => tlsEcho(tlsPort, 'tls.test', pki.ca.certPem)),
    loop('tls-terminate', () => httpExchange(termPort, 'term.test', httpsKeepAlive, undefined, term)),
    chores,
    warmup,
  ]);
  keepAlive.destroy();
  httpsKeepAlive.destroy();
  // Idle now: give the router time to close what the clients closed, then read its figures. The
  // h2c streams go through the http2 engine (h2c: route, the per-request default), whose pooled
  // upstream session to the h2c backend closes after idleTimeout (20 s): wait past that.
  const until = Date.now() + 25_000;
  while (fdsOf(pid) > start.fds && Date.now() < until) await sleep(200);
  const after = { rss: await rssAfterGc(), fds: fdsOf(pid) };
  gc.close();
  router.kill('SIGTERM');
  await router.exited;
  for (const b of [...restartable, h2]) await b.stop();

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
  await rm(dir, { recursive: true, force: true });
  await pki.close();
  return {
    panel: o.panel,
    durationMs: o.durationMs,
    requests,
    errors: { explained, unexplained },
    reloads,
    restarts: restarts.length,
    rss: { start: start.rss, warm: warm.rss, after: after.rss },
    fds: { start: start.fds, warm: warm.fds, after: after.fds },
    accessResults,
  };
}

/** The pass criteria of the issue; returns what failed (empty = passed). */
export function verdict(r: SoakReport): string[] {
  const out: string[] = [];
  if (r.errors.unexplained.length > 0) out.push(`${r.errors.unexplained.length} unexplained errors`);
  for (const k of KINDS) if ((r.requests[k] ?? 0) === 0) out.push(`no ${k} traffic`);
  if (r.fds.after > r.fds.start) out.push(`descriptors ${r.fds.after} > baseline ${r.fds.start}`);
  if (r.rss.after > r.rss.warm * 1.1) out.push(`RSS ${mib(r.rss.after)} > 110% of warm ${mib(r.rss.warm)}`);
  return out;
}

const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;

/** The figures as a few human-readable lines (requests by kind, errors by cause, RSS, fds). */
export function formatReport(r: SoakReport): string {
  const byCause: Record<string, number> = {};
  for (const u of r.errors.unexplained) byCause[u] = (byCause[u] ?? 0) + 1;
  const pct = r.rss.warm > 0 ? ((r.rss.after / r.rss.warm - 1) * 100).toFixed(1) : '?';
  return [
    `soak ${r.panel}: ${r.durationMs / 1000} s, ${r.reloads} reloads, ${r.restarts} backend restarts`,
    `  requests: ${JSON.stringify(r.requests)}`,
    `  errors explained: ${JSON.stringify(r.errors.explained)}`,
    `  errors unexplained: ${JSON.stringify(byCause)}`,
    `  access results: ${JSON.stringify(r.accessResults)}`,
    `  rss: start ${mib(r.rss.start)}, warm ${mib(r.rss.warm)}, after ${mib(r.rss.after)} (${pct}% vs warm)`,
    `  fds: start ${r.fds.start}, warm ${r.fds.warm}, after ${r.fds.after}`,
    `  verdict: ${verdict(r).join('; ') || 'pass'}`,
  ].join('\n');
}
