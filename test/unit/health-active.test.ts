import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { healthCheckSchema } from '../../src/config/cluster.ts';
import type { Backend } from '../../src/contracts/types.ts';
import { HealthManager } from '../../src/health/index.ts';
import { LocalRegistry } from '../../src/registry/local.ts';

async function until(cond: () => boolean, limit = 10_000): Promise<void> {
  const end = Date.now() + limit;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

describe('active health checks', () => {
  it('takes out a backend that dies without receiving traffic (failNum: 1)', async () => {
    const sockets = new Set<Socket>();
    let probes = 0;
    const server: Server = createServer((s) => {
      probes++;
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    });
    const port = await new Promise<number>((r) =>
      server.listen(0, '127.0.0.1', () => r((server.address() as { port: number }).port)),
    );
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(() => health.close());
    const b: Backend = { id: `127.0.0.1:${port}`, host: '127.0.0.1', port, weight: 1, name: 'b' };
    const policy = { ...healthCheckSchema.parse({}), active: true, failNum: 1, interval: 25, timeout: 500 };
    health.update([{ backend: b, policy }]);
    await until(() => probes >= 2);
    expect(registry.get(b.id).available).toBe(true);

    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    await until(() => !registry.get(b.id).available);
    expect(health.probing(b.id)).toBe(true);

    await health.close();
    expect(health.probing(b.id)).toBe(false);
  });

  it('closes every probe socket and timer on close', async () => {
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    const b: Backend = { id: '127.0.0.1:9', host: '127.0.0.1', port: 9, weight: 1, name: 'b' };
    health.update([{ backend: b, policy: { ...healthCheckSchema.parse({}), active: true, interval: 10 } }]);
    await until(() => health.probing(b.id));
    await health.close();
    expect(health.probing(b.id)).toBe(false);
    expect(health.ids()).toEqual([]);
  });
});
