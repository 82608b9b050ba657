/**
 * `Upgrade: h2c` on an `h2c: route` listener (issue 40 item 7): the router answers 101 itself
 * and the http2 engine takes the connection, the upgrade request becoming stream 1; every
 * stream is routed by its own path. Before, `curl --http2 http://…` got 400.
 *
 * The book sends `/admin` to a blackhole and `/api` to its own backend.
 */
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathSplitBook as book } from '../harness/books.ts';
import { rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { type NamedBackend, startNamedBackend } from './per-request-helpers.ts';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(cmd, args, { timeout: 15_000 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? -1), stdout, stderr }),
    ),
  );
}

/** A GET with the upgrade fields curl sends (HTTP2-Settings: curl's own). */
const upgradeHead = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: app.test\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n` +
  `HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n${extra}\r\n`;

const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
const EMPTY_SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

describe.each([
  { panel: 'net', name: 'net' },
  { panel: { name: 'worker', threads: 1, engine: 'net' }, name: 'worker/net' },
])('$name panel, per-request (h2c: route by default): Upgrade: h2c', ({ panel }) => {
  let app: NamedBackend;
  let api: NamedBackend;
  let router: TestRouter;
  const url = (path: string) => `http://127.0.0.1:${router.port()}${path}`;

  beforeAll(async () => {
    app = await startNamedBackend('app');
    api = await startNamedBackend('api');
    router = await startTestRouter({ panel, addressBook: book(app.address, api.address) });
  });
  afterAll(async () => {
    await router.close();
    await app.close();
    await api.close();
  });

  it('curl --http2 is switched with 101 and served over HTTP/2 by the backend its path picks', async () => {
    const r = await run('curl', ['-sS', '--http2', '-w', '\n%{http_version}', url('/api/curl?q=1')]);
    expect(r.stderr).toBe('');
    const [body, version] = r.stdout.split('\n');
    expect(JSON.parse(body!)).toMatchObject({ backend: 'api', url: '/api/curl?q=1' });
    expect(version).toBe('2');
  });

  it('a second request on the upgraded connection is routed by its own path (stream 3)', async () => {
    const r = await run('curl', [
      '-sS',
      '-v',
      '--http2',
      '-w',
      '\n%{http_version}\n',
      url('/first'),
      url('/api/second'),
    ]);
    const lines = r.stdout.split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ backend: 'app', url: '/first' });
    expect(lines[1]).toBe('2');
    expect(JSON.parse(lines[2]!)).toMatchObject({ backend: 'api', url: '/api/second' });
    expect(lines[3]).toBe('2');
    expect(r.stderr).toMatch(/Re-using existing connection|reusing connection/i);
    // One access line per stream, as on the http2 panel. curl 7.88 ends the upgraded stream 1
    // at its Content-Length and resets it (STREAM_CLOSED) before the router's END_STREAM
    // frame, so that line may read client_reset; the whole response was sent either way.
    // (A worker's lines arrive in batches: they are picked by path, not by position.)
    const mine = () => router.access.filter((a) => a.path === '/first' || a.path === '/api/second');
    await eventually(() => mine().length >= 2);
    expect(mine().map((a) => [a.path, a.status, a.protocol])).toEqual([
      ['/first', 200, 'h2c'],
      ['/api/second', 200, 'h2c'],
    ]);
    expect(['ok', 'client_reset']).toContain(mine()[0]!.result);
    expect(mine()[1]!.result).toBe('ok');
  });

  it('a later stream to /admin is refused on its own; the backends never see it', async () => {
    const r = await run('curl', [
      '-sS',
      '--http2',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code} ',
      url('/'),
      '-o',
      '/dev/null',
      url('/admin/x'),
    ]);
    expect(r.stdout).toBe('200 503 ');
    expect([...app.seen, ...api.seen].some((s) => s.includes('/admin'))).toBe(false);
  });

  it('nghttp -u (an OPTIONS upgrade, then GET on stream 3) is served', async () => {
    const r = await run('nghttp', ['-u', url('/api/nghttp')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ backend: 'api', url: '/api/nghttp' });
  });

  it('an upgrade request with a body is still 400, and nothing reaches a backend', async () => {
    const seen = app.seen.length + api.seen.length;
    const res = await rawRequest(router.port(), `${upgradeHead('/api/body', 'Content-Length: 2\r\n')}hi`);
    expect(statusOf(res)).toBe(400);
    expect(app.seen.length + api.seen.length).toBe(seen);
  });

  it('without HTTP2-Settings in Connection, or with a bad HTTP2-Settings, it is 400', async () => {
    const noToken = upgradeHead('/api/x').replace('Connection: Upgrade, HTTP2-Settings', 'Connection: Upgrade');
    expect(statusOf(await rawRequest(router.port(), noToken))).toBe(400);
    const badSettings = upgradeHead('/api/x').replace('AAMAAABkAAQAoAAAAAIAAAAA', 'AAM=');
    expect(statusOf(await rawRequest(router.port(), badSettings))).toBe(400);
  });

  it('a client that sends no preface after the 101 gets GOAWAY PROTOCOL_ERROR and one access line', async () => {
    const res = await rawRequest(router.port(), `${upgradeHead('/api/nopreface')}GET / HTTP/1.1\r\nHost: a\r\n\r\n`);
    const text = res.toString('latin1');
    expect(text.startsWith('HTTP/1.1 101 Switching Protocols\r\n')).toBe(true);
    const frames = res.subarray(text.indexOf('\r\n\r\n') + 4);
    const goaway = frames.indexOf(Buffer.from([0, 0, 8, 7]));
    expect(goaway).toBeGreaterThanOrEqual(0);
    expect(frames.readUInt32BE(goaway + 13)).toBe(1); // PROTOCOL_ERROR
    const mine = () => router.access.filter((a) => a.path === '/api/nopreface');
    await eventually(() => mine().length > 0);
    expect(mine().map((a) => [a.protocol, a.result])).toEqual([['h2c', 'bad_request']]);
    expect(mine()[0]!.reason).toMatch(/bad connection preface/);
  });

  it('a raw client: 101, then preface + SETTINGS; the response arrives on stream 1', async () => {
    const res = await rawRequest(
      router.port(),
      Buffer.concat([Buffer.from(upgradeHead('/api/raw') + PREFACE, 'latin1'), EMPTY_SETTINGS]),
      { timeoutMs: 1500 },
    );
    const text = res.toString('latin1');
    expect(text.startsWith('HTTP/1.1 101 ')).toBe(true);
    const frames = res.subarray(text.indexOf('\r\n\r\n') + 4);
    let headersStream = -1;
    for (let at = 0; at + 9 <= frames.length; at += 9 + frames.readUIntBE(at, 3)) {
      if (frames[at + 3] === 1) headersStream = frames.readUInt32BE(at + 5);
    }
    expect(headersStream).toBe(1);
    expect(text).toContain('"backend":"api"');
  });
});

describe('net panel: Upgrade: h2c on h2c: allow and h2c: refuse listeners stays 400', () => {
  let app: NamedBackend;
  let router: TestRouter;

  beforeAll(async () => {
    app = await startNamedBackend('app');
    router = await startTestRouter({
      listeners: [
        { name: 'open', address: '127.0.0.1:0', h2c: 'allow' },
        { name: 'strict', address: '127.0.0.1:0', h2c: 'refuse' },
      ],
      addressBook: book(app.address, app.address),
    });
  });
  afterAll(async () => {
    await router.close();
    await app.close();
  });

  it.each(['open', 'strict'])('%s: 400, curl --http2 falls back to nothing (400)', async (name) => {
    expect(statusOf(await rawRequest(router.port(name), upgradeHead('/x')))).toBe(400);
    const r = await run('curl', [
      '-sS',
      '--http2',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      `http://127.0.0.1:${router.port(name)}/x`,
    ]);
    expect(r.stdout).toBe('400');
    expect(app.seen.length).toBe(0);
  });
});
