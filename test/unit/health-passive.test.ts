import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { healthCheckSchema } from '../../src/config/cluster.ts';
import type { Backend, HealthCheckPolicy } from '../../src/contracts/types.ts';
import { HealthManager } from '../../src/health/index.ts';
import { LocalRegistry } from '../../src/registry/local.ts';

const policy = (o: Partial<HealthCheckPolicy>): HealthCheckPolicy => ({ ...healthCheckSchema.parse({}), ...o });

function listen(server: Server | HttpServer, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
}

function stop(server: Server | HttpServer): Promise<void> {
  return new Promise((resolve) => {
    (server as HttpServer).closeAllConnections?.();
    server.close(() => resolve());
  });
}

/** A real connect attempt, as a panel would make it; true when it opened. */
function tryConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Polls `cond` every 20 ms for up to `limit` ms (generous; timing never decides the test). */
async function until(cond: () => boolean, limit = 10_000): Promise<void> {
  const end = Date.now() + limit;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const backendAt = (port: number): Backend => ({
  id: `127.0.0.1:${port}`,
  host: '127.0.0.1',
  port,
  weight: 1,
  name: 'b',
});

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

describe('passive health checks (bfe.md §7)', () => {
  it('marks a killed TCP backend down after failNum failures and back up after it restarts', async () => {
    let server = createServer((s) => s.destroy());
    const port = await listen(server);
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(
      () => health.close(),
      () => stop(server),
    );
    const b = backendAt(port);
    health.update([{ backend: b, policy: policy({ failNum: 3, succNum: 2, interval: 30, timeout: 500 }) }]);
    expect(health.probing(b.id)).toBe(false); // passive: nothing runs while healthy

    await stop(server);
    for (let k = 1; k <= 3; k++) {
      expect(await tryConnect(port)).toBe(false);
      expect(registry.get(b.id).available).toBe(true);
      registry.connectFailed(b.id);
    }
    expect(registry.get(b.id).available).toBe(false);
    expect(health.probing(b.id)).toBe(true);

    const downAt = Date.now();
    server = createServer((s) => s.destroy());
    await listen(server, port);
    await until(() => registry.get(b.id).available);
    expect(registry.get(b.id).upSince).toBeGreaterThanOrEqual(downAt); // slow start restarts here
    await until(() => !health.probing(b.id));
  });

  it('counts only consecutive failures', () => {
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(() => health.close());
    const b = backendAt(1);
    health.update([{ backend: b, policy: policy({ failNum: 2 }) }]);
    registry.connectFailed(b.id);
    registry.connected(b.id, 1);
    registry.connectFailed(b.id);
    expect(registry.get(b.id).available).toBe(true);
    registry.connectFailed(b.id);
    expect(registry.get(b.id).available).toBe(false);
  });

  it('brings an HTTP backend back only when it answers the expected status', async () => {
    let status = 503;
    const seen: string[] = [];
    const server = createHttpServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.host}`);
      res.writeHead(status).end();
    });
    const port = await listen(server);
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(
      () => health.close(),
      () => stop(server),
    );
    const b = backendAt(port);
    const p = policy({ type: 'http', path: '/health', host: 'check.test', failNum: 1, interval: 20, timeout: 1000 });
    health.update([{ backend: b, policy: p }]);
    registry.connectFailed(b.id);
    expect(registry.get(b.id).available).toBe(false);
    await until(() => seen.length >= 3);
    expect(registry.get(b.id).available).toBe(false);
    expect(seen[0]).toBe('GET /health check.test');
    status = 200;
    await until(() => registry.get(b.id).available);
  });

  it('stops probing a backend removed by a reload', async () => {
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(() => health.close());
    const b = backendAt(1);
    health.update([{ backend: b, policy: policy({ failNum: 1, interval: 10_000 }) }]);
    registry.connectFailed(b.id);
    expect(health.probing(b.id)).toBe(true);
    health.update([]);
    expect(health.probing(b.id)).toBe(false);
    expect(health.ids()).toEqual([]);
    // The registry's retain removes checkers too.
    health.update([{ backend: b, policy: policy({ failNum: 1, interval: 10_000 }) }]);
    registry.retain([b.id]);
    registry.retain([]);
    expect(health.ids()).toEqual([]);
  });
});
