/**
 * Issue 17 item 1 end to end: `req_path_regmatch` and `req_ua_regmatch` rules in a bfe book, hit
 * with the values that stalled every connection for seconds when regexes ran on V8's
 * backtracking engine (a 40-byte path took ~3 s, doubling per byte). On RE2 each request gets
 * its answer promptly: 404 (no rule matched) for the hostile values, 200 from the right backend
 * for the friendly ones, and a request on another connection is served meanwhile. No timing
 * assertion: the generous test timeout is the only clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { rawRequest, statusOf } from '../harness/client.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';

const ASSETS = '^/assets/([a-z0-9]+/?)*\\.css$';
const BOTS = '(?i).*bot.*crawl';

const head = (path: string, ua: string) =>
  `GET ${path} HTTP/1.1\r\nHost: www.example.test\r\nUser-Agent: ${ua}\r\nConnection: close\r\n\r\n`;

/** The backend name in a whoami answer. */
function backendOf(res: Buffer): string {
  const text = res.toString('latin1');
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).backend;
}

describe.each(['per-request', 'per-connection'] as const)('regmatch rules on hostile input (%s)', (routing) => {
  let assets: TestBackend;
  let bots: TestBackend;
  let router: TestRouter;

  beforeAll(async () => {
    assets = await startHttpBackend('assets');
    bots = await startHttpBackend('bots');
    const cluster = (b: TestBackend) => ({ subclusters: { s1: { weight: 1, backends: [{ address: b.address }] } } });
    router = await startTestRouter({
      routing,
      limits: { maxHeaderBytes: 262_144 },
      addressBook: {
        name: 'bfe',
        products: {
          web: {
            hosts: ['www.example.test'],
            rules: [
              { cond: `req_path_regmatch(\`${ASSETS}\`)`, cluster: 'assets' },
              { cond: `req_ua_regmatch(\`${BOTS}\`)`, cluster: 'bots' },
            ],
          },
        },
        clusters: { assets: cluster(assets), bots: cluster(bots) },
      },
    });
  });
  afterAll(async () => {
    await router.close();
    await assets.close();
    await bots.close();
  });

  const hostile: [string, string, string][] = [
    ['40-byte path', `/assets/${'a'.repeat(31)}!`, 'curl/8'],
    ['100 KB path', `/assets/${'a'.repeat(100_000)}!`, 'curl/8'],
    ['path of many short segments', `/assets/${'ab/'.repeat(20_000)}x!`, 'curl/8'],
    ['3 KB User-Agent', '/', 'bot'.repeat(1_000)],
    ['100 KB User-Agent', '/', `Bot ${'x'.repeat(100_000)}`],
    // Over 1024 characters a regmatch primitive is false (issue 39 item 2), so no rule matches.
    ['14 KB crawler User-Agent', '/', `${'x'.repeat(7_000)} bot ${'y'.repeat(7_000)} Crawl`],
  ];
  it.each(hostile)('%s: 404 promptly', { timeout: 30_000 }, async (_what, path, ua) => {
    const res = await rawRequest(router.port(), head(path, ua), { timeoutMs: 20_000 });
    expect(statusOf(res)).toBe(404);
  });

  const friendly: [string, string, string, string][] = [
    ['asset path', '/assets/css/site.css', 'curl/8', 'assets'],
    ['crawler', '/', 'ExampleBot/2.1 (web crawler)', 'bots'],
    // Up to 1024 characters, the longest value a regmatch primitive matches (issue 39 item 2).
    ['crawler with a long UA', '/', `${'x'.repeat(500)} bot ${'y'.repeat(500)} Crawl`, 'bots'],
  ];
  it.each(friendly)('%s: 200 from %s', { timeout: 30_000 }, async (_what, path, ua, want) => {
    const res = await rawRequest(router.port(), head(path, ua), { timeoutMs: 20_000 });
    expect(statusOf(res)).toBe(200);
    expect(backendOf(res)).toBe(want);
  });

  it('hostile and friendly requests in parallel all get their answers', { timeout: 60_000 }, async () => {
    const requests = Array.from({ length: 8 }, (_, i) =>
      i % 2 === 0
        ? rawRequest(router.port(), head(`/assets/${'a'.repeat(50_000)}!`, 'curl/8'), { timeoutMs: 40_000 })
        : rawRequest(router.port(), head('/assets/x.css', 'curl/8'), { timeoutMs: 40_000 }),
    );
    const statuses = (await Promise.all(requests)).map(statusOf);
    expect(statuses).toEqual([404, 200, 404, 200, 404, 200, 404, 200]);
  });
});
