/**
 * The worker panel under faults and changes (issue 11 §2, §4, §5): a killed worker's
 * connections end while the others' continue and the worker comes back; a reload under load
 * loses no request and every worker serves the new version; `/metrics` totals across workers
 * equal what the backends counted.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startHttpBackend, startTcpBackend } from '../harness/backend.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, startTestRouter } from '../harness/router.ts';
import { bfeConfig, echoes, openTunnel, workersOf } from './worker-helpers.ts';

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe('worker panel: faults', () => {
  it('killing one worker mid-traffic: its connections end, the others continue, it comes back', async () => {
    const echo = await startTcpBackend('echo', (s) => s.pipe(s));
    cleanup.push(() => echo.close());
    const r = await startTestRouter(bfeConfig(2, [echo.address], { routing: 'per-connection' }));
    const sockets = [];
    try {
      for (let i = 0; i < 40; i++) sockets.push(await openTunnel(r.port()));
      await eventually(() => echo.hits === 40, 10_000, '40 tunnels');
      for (const [i, s] of sockets.entries()) expect(await echoes(s, `before-${i};`)).toBe(true);
      const panel = workersOf(r);
      const started = panel.workers().find((w) => w.index === 0)!.startedAt;
      await panel.kill(0);
      const after = await Promise.all(sockets.map((s, i) => echoes(s, `after-${i};`, 3_000)));
      const alive = after.filter(Boolean).length;
      expect(alive).toBeGreaterThan(0);
      expect(alive).toBeLessThan(40);
      // The dead worker's share of the backend's active count was taken back.
      await eventually(() => r.router.runtime.registry.get(echo.address).active === alive, 10_000, 'active count');
      await eventually(
        () => panel.workers().some((w) => w.index === 0 && w.startedAt > started),
        10_000,
        'worker 0 restarted',
      );
      for (const [i, s] of sockets.entries()) if (after[i]) expect(await echoes(s, `later-${i};`)).toBe(true);
      const fresh = [];
      for (let i = 0; i < 20; i++) fresh.push(await openTunnel(r.port()));
      for (const [i, s] of fresh.entries()) expect(await echoes(s, `fresh-${i};`)).toBe(true);
      sockets.push(...fresh);
    } finally {
      for (const s of sockets) s.destroy();
      await r.close();
    }
  });

  it('reload under load loses no request and every worker reports the new version', async () => {
    const a = await startHttpBackend('a');
    const b = await startHttpBackend('b');
    cleanup.push(
      () => a.close(),
      () => b.close(),
    );
    const config = bfeConfig(4, [a.address]);
    const r = await startTestRouter(config);
    try {
      const port = r.port();
      let stop = false;
      const statuses: number[] = [];
      const loops = Array.from({ length: 8 }, async () => {
        while (!stop) statuses.push((await httpGet(port)).status);
      });
      await eventually(() => statuses.length > 100, 10_000, 'load running');
      const full = { listeners: [{ name: 'web', address: `127.0.0.1:${port}` }], ...bfeConfig(4, [b.address]) };
      await writeFile(join(r.dir, 'switchboard.yaml'), stringify({ ...full, limits: { drainTimeout: '1s' } }));
      const result = await r.router.reload();
      expect(result.errors).toEqual([]);
      expect(result.changed).toBe(true);
      const version = r.router.runtime.engine.version;
      expect(
        workersOf(r)
          .workers()
          .map((w) => w.version),
      ).toEqual([version, version, version, version]);
      const hitsB = b.hits;
      await eventually(() => b.hits > hitsB + 100, 10_000, 'load on the new backend');
      const aAfter = a.hits;
      await eventually(() => b.hits > hitsB + 200, 10_000, 'more load');
      stop = true;
      await Promise.all(loops);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect(a.hits).toBe(aAfter);
    } finally {
      await r.close();
    }
  });

  it('/metrics totals across workers equal what the backends counted', async () => {
    const a = await startHttpBackend('a');
    cleanup.push(() => a.close());
    const r = await startTestRouter(bfeConfig(2, [a.address], { admin: { address: '127.0.0.1:0' } }));
    try {
      for (let i = 0; i < 60; i++) expect((await httpGet(r.port())).status).toBe(200);
      const admin = r.router.admin!.address().port;
      const total = async (name: string) => {
        const text = (await httpGet(admin, '/metrics', { host: '127.0.0.1' })).body;
        return text
          .split('\n')
          .filter((l) => l.startsWith(`${name}{`))
          .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
      };
      await eventually(async () => (await total('switchboard_connections_total')) === a.hits, 10_000, 'totals');
      expect(await total('switchboard_requests_total')).toBe(60);
      expect(a.hits).toBe(60);
      expect(
        workersOf(r)
          .workers()
          .every((w) => w.served > 0),
      ).toBe(true);
    } finally {
      await r.close();
    }
  });
});
