/**
 * Health per (cluster, backend) (issue 16 §5, DESIGN "Backend registry"): one backend listed by
 * two clusters is judged under each cluster's own policy. Cluster `a` checks passively
 * (failNum 5), cluster `b` actively (failNum 1). When the backend dies, `b` takes it out after
 * one failed probe — no request routed to `b` reaches it — while `a` still tries it until five
 * requests have failed. Run on the `net` panel and on the `worker` panel (two threads, shared
 * registry), with the real router, real backends and real sockets.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, startTestRouter } from '../harness/router.ts';

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** Two products (`a.test` → cluster `a`, `b.test` → cluster `b`) over the same two backends. */
function config(panel: unknown, shared: string, live: string): Record<string, unknown> {
  const backends = [{ address: shared }, { address: live }];
  return {
    panel,
    operator: 'round-robin',
    addressBook: {
      name: 'bfe',
      products: {
        pa: { hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'a' }] },
        pb: { hosts: ['b.test'], rules: [{ cond: 'default_t()', cluster: 'b' }] },
      },
      clusters: {
        // Listed first: before issue 16 the first cluster's policy was the only one applied.
        a: {
          retries: 0,
          healthCheck: { type: 'tcp', interval: '100ms', timeout: '500ms', failNum: 5, active: false },
          subclusters: { s: { weight: 1, backends } },
        },
        b: {
          retries: 0,
          healthCheck: { type: 'tcp', interval: '100ms', timeout: '500ms', failNum: 1, active: true },
          subclusters: { s: { weight: 1, backends } },
        },
      },
    },
  };
}

const PANELS: [string, unknown][] = [
  ['net', 'net'],
  ['worker (2 threads)', { name: 'worker', threads: 2 }],
];

describe('health per (cluster, backend)', () => {
  for (const [label, panel] of PANELS) {
    it(`${label}: a dead backend is out of the active cluster at once and out of the passive one after failNum failures`, async () => {
      const shared: TestBackend = await startHttpBackend('shared');
      const live = await startHttpBackend('live');
      cleanup.push(() => live.close());
      const r = await startTestRouter(config(panel, shared.address, live.address));
      try {
        const registry = r.router.runtime.registry;
        const up = (cluster: string) => registry.peek(shared.address, cluster)?.available;
        // Both clusters route to both backends while they live.
        const first = await Promise.all([0, 1, 2, 3].map(() => httpGet(r.port(), '/', { host: 'b.test' })));
        expect(first.map((a) => a.status)).toEqual([200, 200, 200, 200]);
        expect(shared.hits).toBeGreaterThan(0);
        expect(up('a')).toBe(true);
        expect(up('b')).toBe(true);
        // One probe stream per (backend, policy): two for the shared backend, not one.
        const checks = r.router.runtime.health.checks().filter((c) => c.id === shared.address);
        expect(checks.map((c) => c.clusters).sort()).toEqual([['a'], ['b']]);

        await shared.close();
        await eventually(() => up('b') === false, 10_000, 'cluster b (active, failNum 1) takes the dead backend out');
        expect(up('a')).toBe(true); // cluster a's own (passive) policy has seen no failure yet

        // Every request routed to b is served by the live backend: none reaches the dead one
        // (retries: 0, so a request sent there would answer 502).
        for (let i = 0; i < 10; i++) {
          const res = await httpGet(r.port(), '/', { host: 'b.test' });
          expect(res.status).toBe(200);
          expect(res.headers['x-backend']).toBe('live');
        }

        // Cluster a keeps sending requests to the dead backend until failNum (5) have failed.
        let failed = 0;
        for (let i = 0; i < 200 && up('a') !== false; i++) {
          const res = await httpGet(r.port(), '/', { host: 'a.test' });
          if (res.status !== 200) failed++;
        }
        expect(up('a')).toBe(false);
        expect(failed).toBeGreaterThanOrEqual(5);
        expect(registry.get(shared.address).available).toBe(false); // the backend as a whole

        // The admin view lists each cluster's verdict.
        const byCluster = Object.fromEntries(registry.clusters(shared.address).map((s) => [s.cluster, s.available]));
        expect(byCluster).toEqual({ a: false, b: false });
        for (let i = 0; i < 6; i++) expect((await httpGet(r.port(), '/', { host: 'a.test' })).status).toBe(200);
      } finally {
        await r.close();
      }
    });
  }

  it('net: a backend that comes back returns to each cluster under that cluster’s succNum', async () => {
    const shared = await startHttpBackend('shared');
    const live = await startHttpBackend('live');
    cleanup.push(() => live.close());
    const r = await startTestRouter(config('net', shared.address, live.address));
    try {
      const registry = r.router.runtime.registry;
      const port = shared.port;
      await shared.close();
      await eventually(() => registry.peek(shared.address, 'b')?.available === false, 10_000, 'b takes it out');
      const again = await startHttpBackend('shared again', undefined, port);
      cleanup.push(() => again.close());
      await eventually(() => registry.peek(shared.address, 'b')?.available === true, 10_000, 'b brings it back');
      expect(registry.peek(shared.address, 'a')?.available).toBe(true);
    } finally {
      await r.close();
    }
  });
});
