/**
 * The pure-JS steps of one HTTP/1 request through the router, each timed alone in this process
 * (CPU per call, best of 5 runs of N calls after a warm-up): `node bench/cost-parts.ts [N]`.
 * Socket work (accept, connect, reads, writes, close) is measured as a whole by bench/cost.ts;
 * this script splits what the router adds on top of it. The router is real: a config validated
 * and started in-process (file book, one backend, round-robin), its engine used as the panels
 * use it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { validateConfig } from '../app/load-config.ts';
import { startLoaded } from '../app/start.ts';
import { Exchange } from '../panels/net/exchange.ts';
import { createLogger } from '../src/base/log.ts';
import type { Attempt, Candidates } from '../src/contracts/types.ts';
import { BodyTracker } from '../src/peek/body-tracker.ts';
import { peekHttp1 } from '../src/peek/http1.ts';
import { peekHttp1Response } from '../src/peek/http1-response.ts';
import { clientAddressing } from '../src/request/client-ip.ts';
import { http1Requests, requestFromPeek } from '../src/request/from-peek.ts';
import { decideRoute, isRouteRefused } from '../src/routing/route.ts';

const N = Number(process.argv[2] ?? 100_000);
const REQUEST = Buffer.from('GET /small HTTP/1.1\r\nHost: bench.test\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n');
const RESPONSE = Buffer.from(
  'HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 30 Nov 2026 23:00:00 GMT\r\n' +
    'Content-Type: text/plain\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\nhello world\n',
);

function time(name: string, f: () => unknown): void {
  for (let i = 0; i < Math.min(N, 20_000); i++) f();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const t = process.cpuUsage();
    for (let i = 0; i < N; i++) f();
    const u = process.cpuUsage(t);
    best = Math.min(best, (u.user + u.system) / N);
  }
  console.log(`${name.padEnd(44)} ${best.toFixed(2)} µs`);
}

const dir = await mkdtemp(join(tmpdir(), 'swb-cost-parts-'));
await writeFile(join(dir, 'servers.yaml'), '- { host: "*", backends: [127.0.0.1:9] }\n');
const config = {
  panel: 'net',
  listeners: [{ name: 'bench', address: '127.0.0.1:0' }],
  operator: { name: 'round-robin' },
  addressBook: { name: 'file', path: join(dir, 'servers.yaml') },
  log: { level: 'warn', access: 'off' },
};
const file = join(dir, 'switchboard.yaml');
const text = stringify(config);
await writeFile(file, text);
const router = await startLoaded(await validateConfig(config, file, text), {
  logger: createLogger('silent'),
  accessLog: () => {},
});
try {
  const engine = router.runtime.engine;
  const listener = engine.loaded.config.listeners[0]!;
  // What a connected socket answers (Node caches both after the first getpeername/getsockname).
  const socket = { remoteAddress: '127.0.0.1', remotePort: 40000, localAddress: '127.0.0.1', localPort: 8080 };
  const info = { listener: listener.name, socket: socket as never, addressing: clientAddressing(listener) };
  const head = peekHttp1(REQUEST, 16384)!;
  const peeked = { kind: 'http1' as const, head, buffer: REQUEST, proxy: undefined };
  const request = requestFromPeek(peeked as never, info);
  const record = { listener: 'bench', client: '', bytesIn: 0, bytesOut: 0, durationMs: 0, result: 'ok' };
  const candidates = decideRoute(engine, listener, request, record) as Candidates;
  if (isRouteRefused(candidates)) throw new Error('bench: no route');
  const first: Attempt = { number: 1, failed: new Set(), subclusters: [] };
  const later = http1Requests(undefined, info);

  time('head parse (request, strict + llhttp)', () => peekHttp1(REQUEST, 16384));
  time('Request build (first head of a connection)', () => requestFromPeek(peeked as never, info));
  time('Request build (later head, per-request)', () => later(head));
  time('decideRoute (CONNECT check + findAddresses)', () => decideRoute(engine, listener, request, record));
  time('findJack (round-robin, first attempt)', () => engine.operator.findJack(request, candidates, first));
  time('response head parse (per-request)', () => peekHttp1Response(RESPONSE, 16384, 'GET'));
  time('body framing (BodyTracker, 12-byte body)', () =>
    new BodyTracker({ kind: 'length', length: 12 }).feed(RESPONSE, RESPONSE.length - 12),
  );
  time('access record: connection (build)', () => ({
    listener: listener.name,
    client: `${socket.remoteAddress}:${socket.remotePort}`,
    bytesIn: 0,
    bytesOut: 0,
    durationMs: 0,
    result: 'ok',
  }));
  time('access record: per-request Exchange + finish', () => {
    const ex = new Exchange(listener.name, '127.0.0.1:40000', undefined, head, request);
    ex.finish('ok', 200);
  });
} finally {
  await router.close();
  await rm(dir, { recursive: true, force: true });
}
