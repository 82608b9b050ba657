/**
 * Rate limits across the fleet (issue 43 item 3) through a real Redis and a real etcd: two
 * routers with `fleet:` on port 0, a client alternating between their ports.
 *
 * - `scope: fleet`, 20/s burst 20, key `rule`: 200 requests at once over both → the backend
 *   sees 20, plus at most 2 + the refill of the burst's window (the 20–22 assumes the
 *   200 land within 100 ms; this loaded machine takes 100–500 ms); `scope: local` → each router
 *   its own 20: at least 40, at most 40 plus the refill.
 * - Redis stopped: `failMode: open` keeps serving at the local share (20/s ÷ 2 members each:
 *   20–22 of 200 again, no 503) and the metric and the log say degraded; `closed` answers 503.
 *   Redis restarted: shared counting again (the bucket back in Redis, 20–22 of 200), no restart.
 * - in-flight `scope: fleet` max 2: two held through one router, the other router refuses.
 * The latency of each burst is measured and printed (p99), never asserted.
 */

import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/base/log.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { httpGet } from '../harness/http.ts';
import { H1Connection, type Reply, startHoldingBackend } from '../harness/policy-traffic.ts';
import { redisBinary, startRedis, type TestRedis } from '../harness/redis.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const GET = 'GET / HTTP/1.1\r\nHost: www.example.test\r\n\r\n';

interface Burst {
  readonly statuses: Map<number, number>;
  /** Milliseconds from the write to the whole response, sorted. */
  readonly latencies: number[];
}

/** `n` requests at once, one per connection, alternating between `ports` (connected before the clock starts). */
async function burst(ports: readonly number[], n: number): Promise<Burst> {
  const conns = Array.from({ length: n }, (_, i) => new H1Connection(ports[i % ports.length] as number));
  await Promise.all(conns.map((c) => c.connected()));
  const timed = (c: H1Connection): Promise<[Reply, number]> => {
    const t = performance.now();
    return c.request(GET).then((r) => [r, performance.now() - t]);
  };
  const replies = await Promise.all(conns.map(timed));
  for (const c of conns) c.destroy();
  const statuses = new Map<number, number>();
  for (const [r] of replies) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  return { statuses, latencies: replies.map(([, ms]) => ms).sort((a, b) => a - b) };
}

const p99 = (b: Burst): number => b.latencies[Math.ceil(b.latencies.length * 0.99) - 1] ?? 0;

/**
 * The most a 20/s burst-20 limit may pass over a burst: 20, the refill over the burst's window
 * (a loaded machine takes 200–500 ms to get 200 requests through, not the 100 ms of the issue),
 * and 2 for what is spent during a sync's round trip.
 */
const most = (b: Burst, rate = 20, burst = 20): number =>
  burst + 2 + Math.floor((rate * (b.latencies[b.latencies.length - 1] ?? 0)) / 1000);

describe.skipIf(etcdBinary() === undefined || redisBinary() === undefined)('fleet limits through Redis', () => {
  let etcd: TestEtcd;
  let redis: TestRedis;
  let backend: TestBackend;
  let prefix = 0;
  const open: TestRouter[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    redis = await startRedis();
    backend = await startHttpBackend('b');
  });
  afterAll(async () => {
    for (const r of open.splice(0)) await r.close().catch(() => undefined);
    await backend?.close();
    await redis?.close();
    await etcd?.close();
  });

  /** Two routers of one fleet (own prefix) with `policy`; resolves once each sees both members. */
  async function fleetOfTwo(
    policy: Record<string, unknown>,
    logs?: string[][],
    to: TestBackend = backend,
  ): Promise<[TestRouter, TestRouter]> {
    prefix++;
    const routers: TestRouter[] = [];
    for (const id of ['r1', 'r2']) {
      const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${to.address}] }\n` });
      const lines: string[] = [];
      logs?.push(lines);
      const r = await startTestRouter(
        {
          addressBook: { name: 'file', path: 'servers.yaml' },
          admin: { address: '127.0.0.1:0', open: ['/metrics'] },
          fleet: {
            id,
            leaseTtl: '2s',
            etcd: { endpoints: [etcd.endpoint], prefix: `/limits${prefix}/`, dialTimeout: '500ms' },
            redis: { url: redis.url, timeout: '50ms' },
          },
          policies: [policy],
        },
        { dir, runtime: { logger: createLogger('info', { write: (l: string) => void lines.push(l) }) } },
      );
      open.push(r);
      routers.push(r);
    }
    await eventually(() => routers.every((r) => r.router.fleet?.liveCount() === 2), 10_000);
    return routers as [TestRouter, TestRouter];
  }

  const rate = (name: string, extra: Record<string, unknown>) => ({
    name,
    use: 'rate-limit',
    point: 'request',
    options: { key: 'rule', rate: '20/s', burst: 20, ...extra },
  });

  const degraded = async (r: TestRouter): Promise<number> => {
    const port = r.router.admin?.address().port ?? 0;
    const m = /^switchboard_fleet_limits_degraded (\d)/m.exec((await httpGet(port, '/metrics')).body);
    return Number(m?.[1] ?? -1);
  };

  const close = async (routers: readonly TestRouter[]) => {
    for (const r of routers) {
      open.splice(open.indexOf(r), 1);
      await r.close();
    }
  };

  it('scope: fleet: 200 at once over two routers pass 20, plus at most the refill of their window', async () => {
    const routers = await fleetOfTwo(rate('fleet-rate', { scope: 'fleet' }));
    const before = backend.hits;
    const b = await burst(
      routers.map((r) => r.port()),
      200,
    );
    const passed = backend.hits - before;
    console.log(`fleet: ${passed} of 200 passed (at most ${most(b)} for its window); p99 ${p99(b).toFixed(1)} ms`);
    expect(b.statuses.get(200)).toBe(passed);
    expect(b.statuses.get(429)).toBe(200 - passed);
    // At least the burst but one: a burst that straddles a sync (or a switch to the fail mode on
    // a loaded machine) can leave one token of it unused (19 of 20, twice in CI runs; docs/fleet.md
    // "Accuracy").
    expect(passed).toBeGreaterThanOrEqual(19);
    expect(passed).toBeLessThanOrEqual(most(b));
    await close(routers);
  });

  it('scope: local: each router counts its own burst (more than the fleet limit, at most 2 × 20 + refill)', async () => {
    const routers = await fleetOfTwo(rate('local-rate', {}));
    const before = backend.hits;
    const b = await burst(
      routers.map((r) => r.port()),
      200,
    );
    const passed = backend.hits - before;
    console.log(`local: ${passed} of 200 passed`);
    // Each router its own 20 (both are reached: 100 each), so more than any fleet-wide window allows.
    expect(passed).toBeGreaterThanOrEqual(40);
    expect(passed).toBeLessThanOrEqual(most(b, 40, 40));
    await close(routers);
  });

  it('Redis stopped, failMode open: the local share (÷ 2 members) keeps serving; Redis back: shared again, no restart', async () => {
    const logs: string[][] = [];
    const routers = await fleetOfTwo(rate('open-rate', { scope: 'fleet', failMode: 'open' }), logs);
    const ports = routers.map((r) => r.port());
    const shared = await burst(ports, 20);
    expect(shared.statuses.get(503)).toBeUndefined();
    expect(shared.statuses.get(200)).toBeGreaterThan(0);
    await redis.stop();
    // A request marks the key used, so the next sync reaches for Redis and fails.
    await eventually(async () => {
      await burst(ports, 2);
      return (await degraded(routers[0])) === 1 && (await degraded(routers[1])) === 1;
    }, 10_000);
    for (const lines of logs) expect(lines.some((l) => l.includes('redis out of reach'))).toBe(true);
    await new Promise((r) => setTimeout(r, 1100)); // the fallback buckets (10/s, burst 10 each) refill
    const before = backend.hits;
    const down = await burst(ports, 200);
    const passed = backend.hits - before;
    console.log(`redis down, open: ${passed} of 200 passed; p99 ${p99(down).toFixed(1)} ms`);
    expect(down.statuses.get(503)).toBeUndefined();
    expect(down.statuses.get(429)).toBe(200 - passed);
    // 10/s burst 10 on each of the 2 members: 20 at once, and the refill of both.
    expect(passed).toBeGreaterThanOrEqual(20);
    expect(passed).toBeLessThanOrEqual(most(down));

    await redis.restart();
    await eventually(async () => (await degraded(routers[0])) === 0 && (await degraded(routers[1])) === 0, 10_000);
    for (const lines of logs) expect(lines.some((l) => l.includes('shared counting resumes'))).toBe(true);
    await new Promise((r) => setTimeout(r, 1100));
    const after = backend.hits;
    const again = await burst(ports, 200);
    const passedAgain = backend.hits - after;
    console.log(`redis back: ${passedAgain} of 200 passed; p99 ${p99(again).toFixed(1)} ms`);
    expect(passedAgain).toBeGreaterThanOrEqual(10);
    expect(passedAgain).toBeLessThanOrEqual(most(again));
    // The count is in Redis again: the rule's bucket, spent.
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const keys = await client.keys(`/limits${prefix}/limits/*`);
      expect(keys.length).toBe(1);
      // Below the burst of 20 as of its last sync: the routers' consumption is counted there
      // (how far below depends on the refill before that sync, which a loaded machine stretches).
      expect(Number(await client.hGet(keys[0] as string, 't'))).toBeLessThan(20);
    } finally {
      client.destroy();
    }
    await close(routers);
  });

  it('Redis stopped, failMode closed: 503; Redis back: served again', async () => {
    const routers = await fleetOfTwo(rate('closed-rate', { scope: 'fleet', failMode: 'closed' }));
    const ports = routers.map((r) => r.port());
    expect((await burst(ports, 4)).statuses.get(200)).toBe(4);
    await redis.stop();
    await eventually(async () => {
      await burst(ports, 2);
      return (await degraded(routers[0])) === 1 && (await degraded(routers[1])) === 1;
    }, 10_000);
    const down = await burst(ports, 20);
    expect(down.statuses.get(503)).toBe(20);
    await redis.restart();
    await eventually(async () => (await burst(ports, 2)).statuses.get(200) === 2, 10_000);
    await close(routers);
  });

  it('in-flight scope: fleet max 2: never more than 2 held across both routers; given back, they pass again', async () => {
    const holding = await startHoldingBackend('h');
    try {
      const routers = await fleetOfTwo(
        {
          name: 'fleet-in-flight',
          use: 'in-flight',
          point: 'request',
          options: { key: 'rule', max: 2, scope: 'fleet' },
        },
        undefined,
        holding,
      );
      const ports = routers.map((r) => r.port());
      const conns: H1Connection[] = [];
      const replies: Promise<Reply>[] = [];
      let refused = 0;
      for (let i = 0; i < 8; i++) {
        const c = new H1Connection(ports[i % 2] as number);
        conns.push(c);
        await c.connected();
        const reply = c.request(GET);
        replies.push(reply);
        // Either held at the backend or refused at once; then the next sync has run.
        const first = await Promise.race([reply.then((r) => r.status), new Promise((r) => setTimeout(r, 100, 0))]);
        if (first === 429) refused++;
        expect(holding.held).toBeLessThanOrEqual(2);
      }
      expect(holding.held).toBe(8 - refused);
      expect(holding.held).toBeGreaterThanOrEqual(1);
      holding.release();
      const statuses = await Promise.all(replies.map((r) => r.then((x) => x.status)));
      expect(statuses.filter((s) => s === 200).length).toBe(8 - refused);
      for (const c of conns) c.destroy();
      // The slots are given back (and reported): each router passes again.
      for (const port of ports) await eventually(async () => (await httpGet(port, '/')).status === 200, 5000);
      await close(routers);
    } finally {
      await holding.close();
    }
  });
});
