/**
 * The per-request upstream pool is bounded (issue 17 item 7): one keep-alive client cycling
 * through 30 backends holds at most `limits.maxIdleUpstreamsPerConnection` idle upstream
 * connections plus its current one, the least recently used closed first. Counted in the router
 * (the registry's open connections, sampled at every new upstream connection, the only moment
 * the count grows) and at the backends.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channels } from '../../src/base/diagnostics.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type NamedBackend, noLeaks, startNamedBackend } from './per-request-helpers.ts';

const BACKENDS = 30;

interface Reply {
  status: number;
  backend: string;
  localPort: number;
}

function get(port: number, agent: Agent, host: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, host: '127.0.0.1', path: '/', headers: { host }, agent }, (res) => {
      const localPort = res.socket.localPort ?? 0; // the agent takes the socket back at 'end'
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          backend: String(res.headers['x-backend']),
          localPort,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

let backends: NamedBackend[];
let dir: string;

beforeAll(async () => {
  backends = await Promise.all(Array.from({ length: BACKENDS }, (_, i) => startNamedBackend(`b${i}`)));
  dir = await tempDir({
    'servers.yaml': backends.map((b) => `- { host: ${b.name}.test, backends: [${b.address}] }`).join('\n'),
  });
});
afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
});

/** A router with `limits` and the peak of its open upstream connections, sampled at each connect. */
async function routerWith(
  limits: Record<string, unknown>,
): Promise<{ router: TestRouter; peak: () => number; stop(): void }> {
  const router = await startTestRouter({ addressBook: { name: 'file', path: 'servers.yaml' }, limits }, { dir });
  let peak = 0;
  const open = () => {
    let n = 0;
    for (const s of router.router.runtime.registry.all()) n += s.active;
    return n;
  };
  const onConnect = (m: unknown) => {
    if ((m as { ok: boolean }).ok) peak = Math.max(peak, open());
  };
  subscribe(channels.upstreamConnect.name, onConnect);
  return {
    router,
    peak: () => peak,
    stop: () => unsubscribe(channels.upstreamConnect.name, onConnect),
  };
}

const openAtBackends = () => backends.reduce((n, b) => n + b.open(), 0);

describe.each([
  // [limits, idle upstreams kept]
  [{}, 2], // the default
  [{ maxIdleUpstreamsPerConnection: 0 }, 0], // 2 descriptors per connection
  [{ maxIdleUpstreamsPerConnection: 4, maxConnections: 1000 }, 4], // 1000 × 6 + 32 fits any usual nofile
])('limits %j: one keep-alive client through %i idle upstreams', (limits, idle) => {
  it(`cycling through ${BACKENDS} backends twice: every request 200 from its backend, at most ${idle} + 1 upstream connections open`, async () => {
    const r = await routerWith(limits);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const ports = new Set<number>();
      for (let round = 0; round < 2; round++) {
        for (const b of backends) {
          const reply = await get(r.router.port(), agent, `${b.name}.test`);
          expect(reply.status).toBe(200);
          expect(reply.backend).toBe(b.name);
          ports.add(reply.localPort);
          expect(r.peak()).toBeLessThanOrEqual(idle + 1);
        }
      }
      expect(ports.size).toBe(1); // one client connection throughout
      expect(r.peak()).toBe(idle + 1); // the bound is reached, never passed
      await eventually(() => openAtBackends() <= idle + 1, 10_000, `backends hold at most ${idle + 1} sockets`);
      agent.destroy();
      await noLeaks(r.router, backends);
    } finally {
      agent.destroy();
      r.stop();
      await r.router.close();
    }
  });
});

describe('LRU order (maxIdleUpstreamsPerConnection: 2)', () => {
  it('the least recently used idle link is the one closed; a link used again moves to the back', async () => {
    const r = await routerWith({ maxIdleUpstreamsPerConnection: 2 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const [b0, b1, b2, b3] = backends as [NamedBackend, NamedBackend, NamedBackend, NamedBackend];
    const before = [b0, b1, b2, b3].map((b) => b.connections());
    try {
      // current → idle (least recently used first) after each request:
      //   b0 → []   b1 → [b0]   b2 → [b0 b1]   b0 (reused) → [b1 b2]
      //   b3 → [b2 b0] (b1 closed)   b0 (reused) → [b2 b3]   b1 (new) → [b3 b0] (b2 closed)
      for (const b of [b0, b1, b2, b0, b3, b0, b1]) {
        const reply = await get(r.router.port(), agent, `${b.name}.test`);
        expect(reply.status).toBe(200);
        expect(reply.backend).toBe(b.name);
      }
      const made = [b0, b1, b2, b3].map((b, i) => b.connections() - before[i]!);
      expect(made).toEqual([1, 2, 1, 1]);
      // b2 was closed as least recently used; b0, b3 idle and b1 current stay open.
      await eventually(() => b2.open() === 0 && b0.open() === 1 && b1.open() === 1 && b3.open() === 1);
      expect(r.peak()).toBeLessThanOrEqual(3);
      agent.destroy();
      await noLeaks(r.router, backends);
    } finally {
      agent.destroy();
      r.stop();
      await r.router.close();
    }
  });
});
