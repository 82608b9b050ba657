/**
 * The worker panel (issue 11): connections spread over every thread, decisions global across
 * threads — least-connections over shared counters, health state and probes owned by the main
 * thread — and the refusal on a Node without `reusePort`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { checkReusePort, supportsReusePort } from '../../panels/worker/index.ts';
import { closedPort, startHttpBackend, startTcpBackend, type TestBackend } from '../harness/backend.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, startTestRouter } from '../harness/router.ts';
import { bfeConfig, openTunnel, workersOf } from './worker-helpers.ts';

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** Runs `total` requests, each on its own connection, `parallel` at a time. */
async function load(port: number, total: number, parallel: number): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < total) {
        next++;
        statuses.push((await httpGet(port)).status);
      }
    }),
  );
  return statuses;
}

describe('worker panel: distribution', () => {
  for (const threads of [2, 4]) {
    it(`${threads} workers over 1,000 connections: each serves at least a fifth of its fair share`, async () => {
      const a = await startHttpBackend('a');
      cleanup.push(() => a.close());
      const r = await startTestRouter(bfeConfig(threads, [a.address]));
      try {
        const statuses = await load(r.port(), 1000, 20);
        expect(statuses.filter((s) => s !== 200)).toEqual([]);
        await eventually(
          () =>
            workersOf(r)
              .workers()
              .reduce((n, w) => n + w.served, 0) === 1000,
          10_000,
          'lines',
        );
        const served = workersOf(r)
          .workers()
          .map((w) => w.served);
        expect(served).toHaveLength(threads);
        for (const n of served) expect(n).toBeGreaterThanOrEqual(1000 / threads / 5);
        expect(a.hits).toBe(1000);
        expect(r.access).toHaveLength(1000);
      } finally {
        await r.close();
      }
    });
  }
});

describe('worker panel: shared decisions', () => {
  it('least-connections balances long-lived connections globally across 4 workers', async () => {
    const a = await startTcpBackend('a');
    const b = await startTcpBackend('b');
    cleanup.push(
      () => a.close(),
      () => b.close(),
    );
    const r = await startTestRouter(
      bfeConfig(4, [a.address, b.address], { operator: 'least-connections', routing: 'per-connection' }),
    );
    const sockets = [];
    const reg = r.router.runtime.registry;
    const active = () => reg.get(a.address).active + reg.get(b.address).active;
    try {
      for (let i = 1; i <= 24; i++) {
        sockets.push(await openTunnel(r.port()));
        await eventually(() => a.hits + b.hits === i, 10_000, `connection ${i} at a backend`);
        // The backend can accept before the worker's connect callback has counted the connection
        // in shared memory: wait for the count, so the next pick (by any worker) sees it.
        await eventually(() => active() === i, 10_000, `connection ${i} counted in the shared registry`);
        // Global counts: never more than one apart, whichever worker accepted the connection.
        expect(Math.abs(a.hits - b.hits)).toBeLessThanOrEqual(1);
      }
      expect(active()).toBe(24);
    } finally {
      for (const s of sockets) s.destroy();
      await r.close();
    }
  });

  it('a backend marked down by the health checks is avoided by every worker', async () => {
    const good = await startHttpBackend('good');
    cleanup.push(() => good.close());
    const dead = `127.0.0.1:${await closedPort()}`;
    const r = await startTestRouter(
      bfeConfig(4, [good.address, dead], {
        cluster: {
          retries: 0,
          healthCheck: { type: 'tcp', interval: '100ms', timeout: '500ms', failNum: 1, active: true },
        },
      }),
    );
    try {
      await eventually(() => !r.router.runtime.registry.get(dead).available, 10_000, 'dead backend marked down');
      const before = r.access.length;
      const statuses = await load(r.port(), 200, 10);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      await r.waitForAccess(before + 200);
      const lines = r.access.slice(before);
      expect(lines.filter((l) => l.backend === dead || l.attempts !== 1)).toEqual([]);
      expect(
        workersOf(r)
          .workers()
          .filter((w) => w.served > 0).length,
      ).toBeGreaterThan(1);
    } finally {
      await r.close();
    }
  });

  it('exactly one probe stream per backend, whatever the number of workers', async () => {
    const probes: number[] = [];
    const backend: TestBackend = await startHttpBackend('probed', (req, res) => {
      if (req.url === '/health') probes.push(Date.now());
      res.end('ok');
    });
    cleanup.push(() => backend.close());
    const interval = 100;
    const r = await startTestRouter(
      bfeConfig(4, [backend.address], {
        cluster: { healthCheck: { type: 'http', path: '/health', interval: `${interval}ms`, active: true } },
      }),
    );
    try {
      await eventually(() => probes.length >= 12, 20_000, '12 probes');
      const n = probes.length - 1;
      const elapsed = probes.at(-1)! - probes[0]!;
      // One chained stream cannot beat its interval; four would send about four probes per interval.
      expect(elapsed).toBeGreaterThanOrEqual(n * interval * 0.9);
    } finally {
      await r.close();
    }
  });
});

describe('worker panel: Node support', () => {
  // Node added listen({ reusePort }) in v22.12.0 and v23.1.0.
  it.each([
    ['20.18.0', false],
    ['22.11.0', false],
    ['22.12.0', true],
    ['23.0.0', false],
    ['23.1.0', true],
    ['24.0.0', true],
  ])('Node %s supports reusePort: %s', (version, ok) => {
    expect(supportsReusePort(version)).toBe(ok);
  });

  it('refuses to start on an older Node, naming the version it needs', () => {
    expect(() => checkReusePort('20.18.0')).toThrow(/panel: worker needs Node >= 22\.12.*Node 20\.18\.0/);
    expect(() => checkReusePort('20.18.0')).toThrow(expect.objectContaining({ code: 'SWB_ERR_CONFIG' }));
  });
});
