/**
 * Response-status outlier detection (BFE `OutlierDetectionHttpCode`, reference/bfe.md §5 and §7):
 * a cluster's `outlierStatus` makes matching responses count as backend failures for passive
 * health; the response still reaches the client and is never retried.
 */
import { Agent, request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../app/load-config.ts';
import { compileOutlierStatus } from '../../src/config/outlier-status.ts';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type NamedBackend, noLeaks, startNamedBackend } from './per-request-helpers.ts';

// [pattern, statuses that match, statuses that do not] — bfe.md §3.4 `OutlierDetectionHttpCode`.
const patterns: [string, number[], number[]][] = [
  ['502|503', [502, 503], [500, 504, 200]],
  ['5xx', [500, 502, 599], [499, 200, 404]],
  ['5XX|404', [500, 404], [403, 200]],
  [' 500 | 4xx ', [500, 400, 499], [501, 200]],
];

describe('outlierStatus patterns', () => {
  it.each(patterns)('%s', (pattern, yes, no) => {
    const m = compileOutlierStatus(pattern)!;
    for (const s of yes) expect(m.matches(s)).toBe(true);
    for (const s of no) expect(m.matches(s)).toBe(false);
  });

  it("'' means none", () => {
    expect(compileOutlierStatus('')).toBeUndefined();
  });

  it.each(['6xx', '5x', '50', '5000', 'abc', '502||503'])('%s is a config error naming the path', async (bad) => {
    const config = {
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: {
          c: { outlierStatus: bad, subclusters: { s: { weight: 1, backends: [{ address: '127.0.0.1:1' }] } } },
        },
      },
    };
    await expect(validateConfig(config, '/tmp/x.yaml', '')).rejects.toThrow(/outlierStatus/);
  });
});

function get(port: number, agent: Agent): Promise<{ status: number; error: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, host: '127.0.0.1', path: '/', headers: { host: 'o.test' }, agent }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, error: res.headers['x-switchboard-error'] as string | undefined }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('per-request: outlier statuses mark a backend down', () => {
  let backend: NamedBackend;
  let router: TestRouter;
  afterEach(async () => {
    await router.close();
    await backend.close();
  });

  async function start(status: number): Promise<void> {
    backend = await startNamedBackend('flaky', (_req, res) => {
      res.writeHead(status, { 'content-length': '4' });
      res.end('body');
    });
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({
          'servers.yaml':
            `- { host: "*", backends: [${backend.address}], outlierStatus: "502|5xx", retries: 3,\n` +
            '    healthCheck: { failNum: 3, interval: 1m } }\n',
        }),
      },
    );
  }

  it('three 503s on one keep-alive connection: each reaches the client, none retried, then the backend is down', async () => {
    await start(503);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await get(router.port(), agent);
        expect(r).toEqual({ status: 503, error: undefined }); // the backend's own 503
      }
      expect(backend.seen).toHaveLength(3);
      const registry = router.router.runtime.registry;
      await eventually(() => registry.peek(backend.address)?.available === false, 10_000, 'backend marked down');
    } finally {
      agent.destroy();
    }
    const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: o.test\r\n\r\n');
    expect(statusOf(res)).toBe(503);
    expect(headerOf(res, 'X-Switchboard-Error')).toBe('no_backend');
    expect(backend.seen).toHaveLength(3);
    await noLeaks(router, [backend]);
  });

  it('statuses outside the pattern never count', async () => {
    await start(404);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 5; i++) expect((await get(router.port(), agent)).status).toBe(404);
    } finally {
      agent.destroy();
    }
    const state = router.router.runtime.registry.peek(backend.address);
    expect(state?.available).toBe(true);
    expect(state?.failures).toBe(0);
  });
});
