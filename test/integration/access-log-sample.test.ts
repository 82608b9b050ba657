/**
 * `sample:` (issue 44 item 3) through the real router: 1,000 requests on keep-alive
 * connections (node http), one per-request line each, under `{ sample: 0.1 }`. The runtime's
 * generator is seeded (`random: seededRandom(…)`), which seeds the sampler's own generator, so
 * the count is the same every run: two routers with the same seed write the same number of
 * lines. Tolerance, should the seed change: Binomial(1000, 0.1) has mean 100 and sd 9.5; the
 * test accepts 100 ± 40 (over 4 sd). Seed 7 writes exactly 100.
 */
import { Agent, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/base/random.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

describe('log.access.rules sample: 0.1 of 1,000 requests', () => {
  let backend: TestBackend | undefined;
  const routers: TestRouter[] = [];
  afterEach(async () => {
    for (const r of routers.splice(0)) await r.close();
    await backend?.close();
    backend = undefined;
  });

  async function sampled(seed: number): Promise<{ lines: number; written: number; skipped: number }> {
    backend ??= await startHttpBackend('b');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    const router = await startTestRouter(
      {
        routing: 'per-request',
        addressBook: { name: 'file', path: 'servers.yaml' },
        // The harness's array is the destination (accessLogRules: the rules judge it too).
        log: { access: { rules: [{ name: 'some', sample: 0.1 }] } },
      },
      { dir, runtime: { random: seededRandom(seed), accessLogRules: true } },
    );
    routers.push(router);
    const agent = new Agent({ keepAlive: true, maxSockets: 10 });
    const get = (path: string) =>
      new Promise<void>((resolve, reject) => {
        const req = request(
          { port: router.port(), host: '127.0.0.1', path, headers: { host: 'a.test' }, agent },
          (res) => {
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', reject);
        req.end();
      });
    try {
      for (let i = 0; i < 1000; i += 50) {
        await Promise.all(Array.from({ length: 50 }, (_, j) => get(`/r${i + j}`)));
      }
    } finally {
      agent.destroy();
    }
    const slot = router.router.runtime.accessLogCounts.slot('some');
    await eventually(() => slot.written + slot.skipped === 1000, 10_000, '1,000 lines judged');
    return { lines: router.access.filter((r) => r.line === 'request').length, ...slot };
  }

  it('writes about a tenth of the lines, the same number for the same seed', async () => {
    const a = await sampled(7);
    expect(a.lines).toBe(a.written);
    expect(a.written + a.skipped).toBe(1000);
    expect(a.written).toBeGreaterThanOrEqual(60);
    expect(a.written).toBeLessThanOrEqual(140);
    const b = await sampled(7);
    expect(b.written).toBe(a.written);
  }, 60_000);
});
