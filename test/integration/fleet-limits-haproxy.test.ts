/**
 * Fleet limits behind an HAProxy front (issue 43, the HAProxy-front row): two routers of one
 * fleet (real etcd, real Redis) behind HAProxy in TCP mode, `send-proxy-v2`, balance roundrobin.
 *
 *   clients 127.0.0.1, .3, .5 ──► HAProxy :fe (tcp) ──source 127.0.0.2, PROXY v2──► r1 | r2 ──► backend
 *
 * `rate-limit` 20/s burst 20 keyed by `client-ip`: the PROXY source (the client), never the
 * socket peer (HAProxy's 127.0.0.2, the same for every client).
 * - `scope: fleet`: 200 at once through HAProxy → the backend sees 20 to 22 (plus the refill
 *   over the burst's window); two other clients at once then pass about 20 each (the key is
 *   the address from the PROXY header: keyed by the socket peer, they would share one 20).
 *   A young key may pass one or two fewer (docs/fleet.md "Accuracy": 1/N of what is left).
 * - `scope: local`: each router its own 20 → more than 22, at most 40 (plus the refill).
 * - Redis stopped: `failMode: open` → 20/s ÷ 2 members on each router, no 503; `closed` → 503.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { burst, most, p99 } from '../harness/fleet-burst.ts';
import { freePort, type Haproxy, haproxyAvailable, startHaproxy } from '../harness/haproxy.ts';
import { httpGet } from '../harness/http.ts';
import { redisBinary, startRedis, type TestRedis } from '../harness/redis.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const ready = etcdBinary() !== undefined && redisBinary() !== undefined && haproxyAvailable();

describe.skipIf(!ready)('fleet limits behind HAProxy (TCP, PROXY v2)', () => {
  let etcd: TestEtcd;
  let redis: TestRedis;
  let backend: TestBackend;
  let prefix = 0;
  const open: { routers: TestRouter[]; haproxy: Haproxy }[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    redis = await startRedis();
    backend = await startHttpBackend('b');
  });
  afterAll(async () => {
    for (const f of open.splice(0)) await closeFront(f);
    await backend?.close();
    await redis?.close();
    await etcd?.close();
  });

  async function closeFront(f: { routers: TestRouter[]; haproxy: Haproxy }): Promise<void> {
    await f.haproxy.close().catch(() => undefined);
    for (const r of f.routers) await r.close().catch(() => undefined);
  }

  /** Two routers of one fleet with `options` on a client-ip rate limit, and HAProxy before them. */
  async function front(options: Record<string, unknown>): Promise<{ port: number; routers: TestRouter[] }> {
    prefix++;
    const routers: TestRouter[] = [];
    for (const id of ['r1', 'r2']) {
      const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
      routers.push(
        await startTestRouter(
          {
            listeners: [{ name: 'web', address: '127.0.0.1:0', proxyProtocol: 'v2', trustedSources: ['127.0.0.0/8'] }],
            addressBook: { name: 'file', path: 'servers.yaml' },
            admin: { address: '127.0.0.1:0', open: ['/metrics'] },
            fleet: {
              id,
              leaseTtl: '2s',
              etcd: { endpoints: [etcd.endpoint], prefix: `/haproxy-limits${prefix}/`, dialTimeout: '500ms' },
              redis: { url: redis.url, timeout: '50ms' },
            },
            policies: [
              {
                name: 'per-client',
                use: 'rate-limit',
                point: 'request',
                options: { key: 'client-ip', rate: '20/s', burst: 20, ...options },
              },
            ],
          },
          { dir },
        ),
      );
    }
    await eventually(() => routers.every((r) => r.router.fleet?.liveCount() === 2), 10_000, 'two members');
    const port = await freePort();
    const haproxy = await startHaproxy(
      [
        'frontend fe',
        `  bind 127.0.0.1:${port}`,
        '  mode tcp',
        '  default_backend routers',
        'backend routers',
        '  mode tcp',
        '  balance roundrobin',
        '  source 127.0.0.2',
        ...routers.map((r, i) => `  server r${i + 1} 127.0.0.1:${r.port()} send-proxy-v2`),
      ].join('\n'),
    );
    open.push({ routers, haproxy });
    // Warm both routers through HAProxy from a client of its own (its own key), so the burst
    // below is decided in a short window (a cold router stretches it, and the refill with it).
    await burst([port], 40, '127.0.0.4');
    for (const r of routers) r.access.length = 0;
    return { port, routers };
  }

  /** Whether `r`'s fleet limits count locally (its `switchboard_fleet_limits_degraded` gauge). */
  async function degraded(r: TestRouter): Promise<boolean> {
    const port = r.router.admin?.address().port ?? 0;
    return /^switchboard_fleet_limits_degraded 1/m.test((await httpGet(port, '/metrics')).body);
  }

  /** Passes over one burst of `n` through HAProxy from `from` (the backend's count), checked against the replies. */
  async function passes(port: number, n: number, from?: string) {
    const before = backend.hits;
    const b = await burst([port], n, from);
    const passed = backend.hits - before;
    expect(b.statuses.get(200) ?? 0).toBe(passed);
    return { b, passed };
  }

  it('scope: fleet: 200 at once through HAProxy pass 20 to 22 in total; another client has its own 20', async () => {
    const { port, routers } = await front({ scope: 'fleet' });
    const { b, passed } = await passes(port, 200);
    console.log(`fleet behind HAProxy: ${passed} of 200 passed (at most ${most(b)}); p99 ${p99(b).toFixed(1)} ms`);
    expect(b.statuses.get(429)).toBe(200 - passed);
    expect(passed).toBeGreaterThanOrEqual(20);
    expect(passed).toBeLessThanOrEqual(most(b));
    // Both routers decided (round robin): each answered some of the 429s.
    for (const r of routers) expect(r.access.filter((a) => a.status === 429).length).toBeGreaterThan(0);
    // The key is the PROXY source: every router saw 127.0.0.1 (never HAProxy's 127.0.0.2) ...
    expect(new Set(routers.flatMap((r) => r.access.map((a) => a.client?.split(':')[0])))).toEqual(
      new Set(['127.0.0.1']),
    );
    // ... and two other clients at once each get their own bucket (one shared key would pass
    // at most most(b) ≈ 27 for both together, so one of them would get fewer than 18).
    const others = await Promise.all(['127.0.0.3', '127.0.0.5'].map((from) => burst([port], 100, from)));
    console.log(`two other clients at once: ${others.map((b) => b.statuses.get(200) ?? 0).join(' and ')} of 100 each`);
    for (const b of others) {
      expect(b.statuses.get(200) ?? 0).toBeGreaterThanOrEqual(18);
      expect(b.statuses.get(200) ?? 0).toBeLessThanOrEqual(most(b));
    }
  });

  it('scope: local: each router its own 20 (more than 22, at most 40 plus the refill)', async () => {
    const { port } = await front({});
    const { b, passed } = await passes(port, 200);
    console.log(`local behind HAProxy: ${passed} of 200 passed`);
    expect(passed).toBeGreaterThan(22);
    expect(passed).toBeLessThanOrEqual(most(b, 40, 40));
  });

  it('Redis stopped, failMode open: the local share (20/s ÷ 2 members) keeps serving through HAProxy', async () => {
    const { port, routers } = await front({ scope: 'fleet', failMode: 'open' });
    expect((await passes(port, 4)).passed).toBe(4);
    await redis.stop();
    try {
      // A request marks the key used, so the next sync reaches for Redis and fails.
      await eventually(
        async () => {
          await burst([port], 2);
          return (await Promise.all(routers.map(degraded))).every(Boolean);
        },
        10_000,
        'limits degraded on both routers',
      );
      await new Promise((r) => setTimeout(r, 1100)); // the fallback buckets (10/s, burst 10 each) refill
      const { b, passed } = await passes(port, 200);
      console.log(`redis down, open, behind HAProxy: ${passed} of 200 passed; p99 ${p99(b).toFixed(1)} ms`);
      expect(b.statuses.get(503)).toBeUndefined();
      expect(b.statuses.get(429)).toBe(200 - passed);
      expect(passed).toBeGreaterThanOrEqual(20);
      expect(passed).toBeLessThanOrEqual(most(b));
    } finally {
      await redis.restart();
    }
  });

  it('Redis stopped, failMode closed: 503 through HAProxy; Redis back: served again', async () => {
    const { port, routers } = await front({ scope: 'fleet', failMode: 'closed' });
    expect((await passes(port, 4)).passed).toBe(4);
    await redis.stop();
    try {
      await eventually(
        async () => {
          await burst([port], 2);
          return (await Promise.all(routers.map(degraded))).every(Boolean);
        },
        10_000,
        'limits degraded on both routers',
      );
      const down = await burst([port], 20);
      expect(down.statuses.get(503)).toBe(20);
    } finally {
      await redis.restart();
    }
    await eventually(async () => (await burst([port], 2)).statuses.get(200) === 2, 10_000, 'served again');
  });
});
