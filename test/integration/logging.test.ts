/**
 * Issue 19 item 3 and the access-log and metrics fixes, through the real CLI (`switchboard
 * start` in a child process, real sockets): JSON lines with string levels and ISO time on both
 * logs, `--log-level debug` routing-decision lines, a health-transition line when a backend is
 * killed, byte counts of the router's own answers, `/metrics` process and per-backend series,
 * and `--log-format pretty` aligned lines from a worker-panel router (with `thread`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type CliRouter, type LogLine, spawnCli } from '../harness/cli.ts';
import { rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, tempDir } from '../harness/router.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const get = (host: string, path = '/') => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

function config(live: string, dead: string, accessFile: string, panel = 'net'): string {
  return stringify({
    panel,
    listeners: [{ name: 'web', address: '127.0.0.1:0' }],
    routing: 'per-request',
    limits: { drainTimeout: '1s' },
    admin: { address: '127.0.0.1:0' },
    addressBook: {
      name: 'bfe',
      products: {
        web: {
          hosts: ['live.test', 'dead.test'],
          rules: [
            { cond: 'req_host_in("dead.test")', cluster: 'dead' },
            { cond: 'default_t()', cluster: 'live' },
          ],
        },
      },
      clusters: {
        live: {
          retries: 0,
          healthCheck: { type: 'tcp', interval: '100ms', timeout: '500ms', failNum: 1, succNum: 1 },
          subclusters: { s1: { weight: 1, backends: [{ address: live }] } },
        },
        dead: { retries: 1, subclusters: { s1: { weight: 1, backends: [{ address: dead }] } } },
      },
    },
    log: { access: accessFile },
  });
}

async function accessLines(file: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('switchboard start --log-format json --log-level debug (net panel)', () => {
  let dir: string;
  let live: TestBackend;
  let livePort: number;
  let deadAddress: string;
  let cli: CliRouter;
  let port: number;
  let adminPort: number;
  const access = () => accessLines(join(dir, 'access.log'));

  beforeAll(async () => {
    dir = await tempDir();
    live = await startHttpBackend('live');
    livePort = live.port;
    deadAddress = `127.0.0.1:${await closedPort()}`;
    await writeFile(join(dir, 'sb.yaml'), config(live.address, deadAddress, join(dir, 'access.log')));
    cli = spawnCli(join(dir, 'sb.yaml'), { args: ['--log-format', 'json', '--log-level', 'debug'] });
    port = await cli.port('web');
    const started = await cli.waitForLog((l) => l.msg === 'switchboard started');
    adminPort = Number(String(started.admin).split(':').pop());
  }, 30_000);
  afterAll(async () => {
    cli.kill();
    await cli.exited;
    await live.close();
  });

  it('writes JSON lines with string levels and ISO times on the process log', () => {
    expect(cli.logs.length).toBeGreaterThan(1);
    for (const l of cli.logs) {
      expect(typeof l.level, JSON.stringify(l)).toBe('string');
      expect(String(l.time)).toMatch(ISO);
    }
  });

  it('logs each routing decision at debug: listener, client, host, path, product, rule, cluster, backend, attempt, result', async () => {
    const ok = await rawRequest(port, get('live.test', '/a'));
    expect(ok.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
    const decided = await cli.waitForLog((l) => l.msg === 'route' && l.host === 'live.test');
    const client = expect.stringMatching(/^127\.0\.0\.1:\d+$/);
    expect(decided).toMatchObject({
      level: 'debug',
      listener: 'web',
      client,
      path: '/a',
      product: 'web',
      cluster: 'live',
    });
    const line = await cli.waitForLog((l) => l.msg === 'route attempt' && l.host === 'live.test' && l.result === 'ok');
    expect(line).toMatchObject({
      level: 'debug',
      listener: 'web',
      client: decided.client,
      path: '/a',
      product: 'web',
      cluster: 'live',
      subcluster: 's1',
      backend: live.address,
      attempt: 1,
    });
    expect(line.rule).toBe('products.web.rules[1]');

    await rawRequest(port, get('dead.test'));
    await cli.waitForLog((l) => l.msg === 'route attempt' && l.host === 'dead.test' && l.attempt === 2);
    const tries = cli.logs.filter((l) => l.msg === 'route attempt' && l.host === 'dead.test');
    expect(tries.map((l) => [l.attempt, l.result, l.backend])).toEqual([
      [1, 'connect_failed', deadAddress],
      [2, 'connect_failed', deadAddress],
    ]);

    await rawRequest(port, get('nowhere.test'));
    await cli.waitForLog(
      (l) => l.msg === 'route' && l.host === 'nowhere.test' && l.result === 'no_route' && l.listener === 'web',
    );
  });

  it("counts the router's own answers in the access log: bytesOut is what the client received", async () => {
    const notFound = await rawRequest(port, get('nowhere.test', '/x'));
    const badGateway = await rawRequest(port, get('dead.test', '/y'));
    expect(notFound.toString('latin1')).toMatch(/^HTTP\/1\.1 404/);
    expect(badGateway.toString('latin1')).toMatch(/^HTTP\/1\.1 502/);
    await eventually(async () => (await access()).some((r) => r.path === '/y'));
    const lines = await access();
    const a404 = lines.find((r) => r.path === '/x');
    const a502 = lines.find((r) => r.path === '/y');
    expect(a404).toMatchObject({ level: 'info', msg: 'access', result: 'no_route', status: 404 });
    expect(a404?.bytesOut).toBe(notFound.length);
    expect(a502).toMatchObject({ result: 'connect_failed', status: 502 });
    expect(a502?.bytesOut).toBe(badGateway.length);
    for (const r of lines) expect(String(r.time)).toMatch(ISO);
  });

  it("per-request routing: the router's own answers count the request bytes it read (bytesIn), as a proxied request does", async () => {
    const before = (await access()).length;
    const proxied = get('live.test', '/in-ok');
    const noRoute = get('nowhere.test', '/in-404');
    const connectFailed = get('dead.test', '/in-502');
    const badHead = 'GET /in-400 HTTP/1.1\r\nHost: live.test\r\nBad Name: x\r\n\r\n';
    const tooLarge = `GET /in-431 HTTP/1.1\r\nHost: live.test\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`;
    expect(statusOf(await rawRequest(port, proxied))).toBe(200);
    expect(statusOf(await rawRequest(port, noRoute))).toBe(404);
    expect(statusOf(await rawRequest(port, connectFailed))).toBe(502);
    expect(statusOf(await rawRequest(port, badHead))).toBe(400);
    expect(statusOf(await rawRequest(port, tooLarge))).toBe(431);
    await eventually(async () => (await access()).length >= before + 5);
    const lines = (await access()).slice(before);
    const line = (path: string) => lines.find((r) => r.path === path);
    expect(line('/in-ok')).toMatchObject({ status: 200, bytesIn: proxied.length });
    expect(line('/in-404')).toMatchObject({ result: 'no_route', status: 404, bytesIn: noRoute.length });
    expect(line('/in-502')).toMatchObject({ result: 'connect_failed', status: 502, bytesIn: connectFailed.length });
    // A head the router cannot read has no path: everything read of it counts.
    const refused = lines.filter((r) => r.path === undefined);
    const a400 = refused.find((r) => r.status === 400);
    const a431 = refused.find((r) => r.status === 431);
    expect(a400).toMatchObject({ result: 'bad_request', bytesIn: badHead.length });
    expect(a431?.result).toBe('header_too_large');
    // At least the limit (maxHeaderBytes, 16 KiB by default) was read before the head was refused, at most what was sent.
    expect(a431?.bytesIn).toBeGreaterThanOrEqual(16_384);
    expect(a431?.bytesIn).toBeLessThanOrEqual(tooLarge.length);
  });

  it('serves process metrics and per-backend request series on /metrics', async () => {
    await rawRequest(port, get('live.test', '/m'));
    const text = await scrape(adminPort);
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
    expect(text).toMatch(/^process_open_fds \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    const series = new RegExp(
      `^switchboard_backend_requests_total\\{cluster="live",backend="${live.address}",result="ok"\\} (\\d+)`,
      'm',
    );
    expect(Number(series.exec(text)?.[1])).toBeGreaterThanOrEqual(2);
    expect(text).toContain(
      `switchboard_backend_request_duration_seconds_count{cluster="live",backend="${live.address}"}`,
    );
  });

  it('logs a health transition when a backend dies and when it comes back', async () => {
    await live.close();
    await rawRequest(port, get('live.test', '/gone'));
    // The dead cluster's passive checks take its backend down too (the 502 tests): not this one.
    const down = await cli.waitForLog((l) => l.msg === 'backend down' && l.cluster === 'live');
    expect(down).toMatchObject({ level: 'warn', backend: live.address, cluster: 'live' });
    expect(String(down.reason)).toMatch(/consecutive failures/);
    live = await startHttpBackend('live', undefined, livePort);
    const up = await cli.waitForLog((l: LogLine) => l.msg === 'backend up');
    expect(up).toMatchObject({ level: 'info', backend: live.address, cluster: 'live' });
    expect(String(up.reason)).toMatch(/successful tcp probes/);
  });
});

describe('switchboard start --log-format pretty (worker panel, info level)', () => {
  let cli: CliRouter;
  let live: TestBackend;

  beforeAll(async () => {
    const dir = await tempDir();
    live = await startHttpBackend('live');
    const file = join(dir, 'sb.yaml');
    await writeFile(file, config(live.address, `127.0.0.1:${await closedPort()}`, 'off', 'worker'));
    cli = spawnCli(file, { args: ['--log-format', 'pretty', '--workers', '2'] });
    await cli.waitForLog((l) => /switchboard started/.test(String(l.msg)), 30_000);
  }, 40_000);
  afterAll(async () => {
    cli.kill();
    await cli.exited;
    await live.close();
  });

  it('writes aligned readable lines, no JSON and no numeric level; worker lines carry thread', async () => {
    const listening = cli.logs.filter((l) => /listening/.test(String(l.msg)));
    const port = Number(/address=127\.0\.0\.1:(\d+)/.exec(String(listening[0]?.msg))?.[1]);
    await rawRequest(port, get('live.test'));
    const lines = cli.logs.map((l) => String(l.msg));
    for (const text of lines) {
      expect(text.startsWith('{'), text).toBe(false);
      // time, LEVEL:, then the message in one column
      expect(text, text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} (INFO|WARN|ERROR|FATAL|DEBUG|TRACE):\s+\S/);
      expect(/^.{12} [A-Z]+:\s+/.exec(text)?.[0].length, text).toBe(20);
      expect(text).not.toMatch(/level[=:]\s*\d/);
    }
    // One 'listening' line per worker thread and listener, each with its thread.
    const threads = listening.map((l) => /thread=(\d+)/.exec(String(l.msg))?.[1]).sort();
    expect(threads).toEqual(['0', '1']);
    // Info level: no routing-decision lines.
    expect(lines.some((t) => /DEBUG/.test(t))).toBe(false);
  });

  it('serves process metrics once and per-backend series counted in the worker threads', async () => {
    const started = cli.logs.map((l) => String(l.msg)).find((t) => /switchboard started/.test(t));
    const admin = Number(/admin=127\.0\.0\.1:(\d+)/.exec(String(started))?.[1]);
    const listening = cli.logs.map((l) => String(l.msg)).find((t) => /listening/.test(t));
    await rawRequest(Number(/address=127\.0\.0\.1:(\d+)/.exec(String(listening))?.[1]), get('live.test'));
    const text = await scrape(admin);
    expect(text.match(/^# TYPE process_resident_memory_bytes /gm)).toHaveLength(1);
    await eventually(async () =>
      (await scrape(admin)).includes(
        `switchboard_backend_requests_total{cluster="live",backend="${live.address}",result="ok"}`,
      ),
    );
  });
});

describe("the router's own answers count their bytes on every panel and routing mode", () => {
  // The http2 panel counts body bytes, as for the responses it forwards (docs/operations.md "Access log").
  it.each([
    ['net, per-connection routing', { panel: 'net', routing: 'per-connection' }, false],
    ['http2 panel, HTTP/1.1 client', { panel: 'http2' }, true],
  ])('%s: a 404 line has bytesOut of what the client received', async (_what, extra, bodyOnly) => {
    const router = await startTestRouter({
      ...extra,
      addressBook: { name: 'bfe', products: {}, clusters: {} },
    });
    try {
      const answer = await rawRequest(router.port(), get('nowhere.test', '/404'));
      expect(answer.toString('latin1')).toMatch(/^HTTP\/1\.1 404/);
      await eventually(() => router.access.some((r) => r.result === 'no_route'));
      const line = router.access.find((r) => r.result === 'no_route');
      expect(line?.status).toBe(404);
      const body = answer.subarray(answer.indexOf('\r\n\r\n') + 4);
      expect(line?.bytesOut).toBe(bodyOnly ? body.length : answer.length);
      expect(line?.bytesOut).toBeGreaterThan(0);
    } finally {
      await router.close();
    }
  });
});
