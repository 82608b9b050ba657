/**
 * Worker panel metrics (issue 16): requests served from the very first moment the threads
 * accept — before `startRouter` has even returned — are counted on the main thread's
 * `/metrics`, exactly once each. Worker threads serve on their own, so the main thread must be
 * listening on the diagnostics channels before the first thread binds.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { httpGet } from '../harness/http.ts';
import { parsePrometheus, sum } from '../harness/prometheus.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

describe('worker panel /metrics from the first request', () => {
  let a: TestBackend | undefined;
  let router: TestRouter | undefined;
  afterAll(async () => {
    await router?.close();
    await a?.close();
  });

  it('counts every request, including those served while the router was still starting', async () => {
    a = await startHttpBackend('a');
    const port = await closedPort();
    let served = 0;
    let starting = true;
    // Clients hammer the port while the router starts (refused connects are retried, for as
    // long as the start takes: a loaded machine starts two threads in seconds), then send 20 more.
    const clients = Array.from({ length: 4 }, async () => {
      while (starting) {
        try {
          if ((await httpGet(port)).status === 200) served++;
        } catch {
          await new Promise((r) => setTimeout(r, 2));
        }
      }
      for (let i = 0; i < 20; i++) if ((await httpGet(port)).status === 200) served++;
    });
    try {
      router = await startTestRouter(
        {
          panel: { name: 'worker', threads: 2 },
          listeners: [{ name: 'web', address: `127.0.0.1:${port}` }],
          addressBook: { name: 'file', path: 'servers.yaml' },
          admin: { address: '127.0.0.1:0' },
        },
        { dir: await tempDir({ 'servers.yaml': `- { host: www.example.test, backends: [${a.address}] }\n` }) },
      );
    } finally {
      starting = false; // the clients stop retrying even when the start failed
    }
    await Promise.all(clients);
    expect(served).toBeGreaterThan(0);
    const scrape = async () => {
      const res = await fetch(`http://127.0.0.1:${router!.router.admin!.address().port}/metrics`);
      return sum(parsePrometheus(await res.text()), 'switchboard_requests_total');
    };
    await eventually(async () => (await scrape()) >= served);
    expect(await scrape()).toBe(served);
  });
});
