/**
 * BFE's lookup order end to end through the `net` panel with real backends (reference bfe.md §4):
 * host → product → basic rule (ADVANCED_MODE falls through) → advanced rule → cluster, with a
 * named condition and a host tag. Each backend answers with its name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { rawRequest } from '../harness/client.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';

const NAMES = ['web', 'static', 'api', 'canary', 'tagged', 'fallback'] as const;

describe('bfe book through the net panel: lookup order', () => {
  const backends = new Map<string, TestBackend>();
  let router: TestRouter;

  beforeAll(async () => {
    for (const n of NAMES) backends.set(n, await startHttpBackend(n));
    const cluster = (n: string) => ({
      subclusters: { s1: { weight: 1, backends: [{ address: backends.get(n)!.address }] } },
    });
    router = await startTestRouter({
      addressBook: {
        name: 'bfe',
        defaultProduct: 'other',
        conditions: { canary: 'req_header_value_in("X-Canary", "1", false)' },
        products: {
          web: {
            hosts: ['www.example.test', '*.example.test'],
            hostTags: { internal: ['intra.example.org'] },
            basicRules: [
              { hosts: ['www.example.test'], paths: ['/static/*'], cluster: 'static' },
              { hosts: ['www.example.test'], paths: ['/api/*'], cluster: 'ADVANCED_MODE' },
            ],
            rules: [
              { cond: '$canary', cluster: 'canary' },
              { cond: 'req_host_tag_in("internal")', cluster: 'tagged' },
              { cond: 'req_path_prefix_in("/api", false)', cluster: 'api' },
              { cond: 'default_t()', cluster: 'web' },
            ],
          },
          other: { rules: [{ cond: 'default_t()', cluster: 'fallback' }] },
        },
        clusters: Object.fromEntries(NAMES.map((n) => [n, cluster(n)])),
      },
    });
  });
  afterAll(async () => {
    await router.close();
    for (const b of backends.values()) await b.close();
  });

  const cases: [string, string, string, string[], string][] = [
    ['exact host, default rule', 'www.example.test', '/', [], 'web'],
    ['basic rule by host + path prefix', 'www.example.test', '/static/app.css', [], 'static'],
    ['basic rule ADVANCED_MODE falls through to advanced rules', 'www.example.test', '/api/orders', [], 'api'],
    ['wildcard host (any depth), advanced rule', 'a.shop.example.test', '/api/x', [], 'api'],
    ['named condition ($canary) before later rules', 'shop.example.test', '/api/x', ['X-Canary: 1'], 'canary'],
    ['host tag', 'intra.example.org', '/', [], 'tagged'],
    ['unknown host → defaultProduct', 'nowhere.test', '/', [], 'fallback'],
  ];
  it.each(cases)('%s: %s%s → %s', async (_what, host, path, headers, want) => {
    const head = [`GET ${path} HTTP/1.1`, `Host: ${host}`, ...headers, 'Connection: close', '', ''].join('\r\n');
    const res = (await rawRequest(router.port(), head)).toString('latin1');
    expect(res).toMatch(/^HTTP\/1\.1 200/);
    expect(JSON.parse(res.slice(res.indexOf('\r\n\r\n') + 4)).backend).toBe(want);
  });

  it('logs the product and cluster the rule chose', async () => {
    const before = router.access.length;
    await rawRequest(router.port(), 'GET /static/x HTTP/1.1\r\nHost: www.example.test\r\nConnection: close\r\n\r\n');
    await router.waitForAccess(before + 1);
    expect(router.access.at(-1)).toMatchObject({ product: 'web', cluster: 'static', result: 'ok' });
  });
});
