/**
 * Health per (cluster, backend) (issue 16 §5): the registry keeps one health record per cluster
 * and one connection count per backend (local and shared implementations alike); the health
 * manager probes a backend once per distinct policy and judges each cluster under its own.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { healthCheckSchema } from '../../src/config/cluster.ts';
import type { BackendState } from '../../src/contracts/backend-registry.ts';
import type { Backend, HealthCheckPolicy } from '../../src/contracts/types.ts';
import { HealthManager } from '../../src/health/index.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { allocateSharedState, SharedRegistry } from '../../src/registry/shared.ts';
import { eventually } from '../harness/router.ts';

const DEFAULTS = healthCheckSchema.parse({});
const policy = (p: Partial<HealthCheckPolicy>): HealthCheckPolicy => ({ ...DEFAULTS, ...p });
const backend = (port: number): Backend => ({ id: `127.0.0.1:${port}`, host: '127.0.0.1', port, weight: 1, name: '' });

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

/** A TCP server counting the connections (probes) it accepts. */
async function probeTarget(): Promise<{ port: number; probes: () => number }> {
  let n = 0;
  const server: Server = createServer((s) => {
    n++;
    s.on('error', () => {});
    s.destroy();
  });
  const port = await new Promise<number>((r) =>
    server.listen(0, '127.0.0.1', () => r((server.address() as { port: number }).port)),
  );
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { port, probes: () => n };
}

describe('health manager: one checker per backend and distinct policy', () => {
  it('dedupes identical policies and keeps distinct ones apart', () => {
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(() => health.close());
    const b = backend(9);
    const passive = policy({ failNum: 5 });
    health.update([
      { backend: b, cluster: 'web', policy: passive },
      { backend: b, cluster: 'api', policy: { ...passive } }, // equal by value, not by identity
      { backend: b, cluster: 'adm', policy: policy({ failNum: 1, active: true, interval: 60_000 }) },
      { backend: b, cluster: 'tls', policy: passive, proxyProtocol: 'v2' }, // probes differ: PROXY first
    ]);
    const checks = health.checks();
    expect(checks.map((c) => c.clusters)).toEqual([['web', 'api'], ['adm'], ['tls']]);
    expect(health.ids()).toEqual([b.id]);
  });

  it('a reload regroups: a changed policy gets its own checker, an unchanged one is kept', () => {
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(() => health.close());
    const b = backend(9);
    const p = policy({ failNum: 2 });
    health.update([
      { backend: b, cluster: 'web', policy: p },
      { backend: b, cluster: 'api', policy: p },
    ]);
    expect(health.checks()).toHaveLength(1);
    health.update([
      { backend: b, cluster: 'web', policy: p },
      { backend: b, cluster: 'api', policy: policy({ failNum: 7 }) },
    ]);
    expect(health.checks().map((c) => [c.clusters, c.policy.failNum])).toEqual([
      [['web'], 2],
      [['api'], 7],
    ]);
    // Failures now reach the checker of their cluster: 2 take web out, api needs 7.
    registry.connectFailed(b.id, 'api');
    registry.connectFailed(b.id, 'api');
    expect(registry.get(b.id, 'api').available).toBe(true);
    registry.connectFailed(b.id, 'web');
    registry.connectFailed(b.id, 'web');
    expect(registry.get(b.id, 'web').available).toBe(false);
    expect(registry.get(b.id, 'api').available).toBe(true);
  });

  it('judges each cluster under its own failNum; a failure without a cluster counts in every one', () => {
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(() => health.close());
    const b = backend(9);
    health.update([
      { backend: b, cluster: 'strict', policy: policy({ failNum: 2, interval: 60_000 }) },
      { backend: b, cluster: 'lenient', policy: policy({ failNum: 3, interval: 60_000 }) },
    ]);
    registry.connectFailed(b.id);
    registry.connectFailed(b.id);
    expect(registry.get(b.id, 'strict').available).toBe(false);
    expect(registry.get(b.id, 'lenient').available).toBe(true);
    expect(registry.get(b.id).available).toBe(false); // the backend as a whole: down somewhere
    registry.connectFailed(b.id);
    expect(registry.get(b.id, 'lenient').available).toBe(false);
    expect(health.probing(b.id, 'strict')).toBe(true);
  });

  it('one probe stream serves every cluster of a shared policy; each comes back on its own', async () => {
    const target = await probeTarget();
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(() => health.close());
    const b = backend(target.port);
    const p = policy({ failNum: 1, succNum: 3, interval: 20, timeout: 500 });
    health.update([
      { backend: b, cluster: 'web', policy: p },
      { backend: b, cluster: 'api', policy: p },
    ]);
    expect(health.checks()).toHaveLength(1);
    registry.connectFailed(b.id, 'web');
    expect(registry.get(b.id, 'web').available).toBe(false);
    expect(registry.get(b.id, 'api').available).toBe(true); // api saw no failure
    await eventually(() => registry.get(b.id, 'web').available, 10_000, 'web back after succNum probes');
    expect(target.probes()).toBeGreaterThanOrEqual(3);
    // Passive: once every cluster is up, probing stops.
    await eventually(() => !health.probing(b.id), 10_000, 'probing stops');
  });

  it('a backend removed from the registry stops every checker of it', () => {
    const registry = new LocalRegistry();
    const health = new HealthManager(registry);
    cleanup.push(() => health.close());
    const b = backend(9);
    health.update([
      { backend: b, cluster: 'a', policy: policy({ active: true, interval: 60_000 }) },
      { backend: b, cluster: 'b', policy: policy({ interval: 60_000 }) },
    ]);
    expect(health.probing(b.id, 'a')).toBe(true);
    registry.retain([{ backend: b, cluster: 'a' }]);
    registry.retain([]);
    expect(health.checks()).toEqual([]);
    expect(health.probing(b.id)).toBe(false);
  });
});

describe('registry: health per (cluster, backend), counts per backend', () => {
  const makers: [string, () => { owner: SharedRegistry | LocalRegistry; view: SharedRegistry | LocalRegistry }][] = [
    [
      'local',
      () => {
        const r = new LocalRegistry();
        return { owner: r, view: r };
      },
    ],
    [
      'shared (owner + worker view)',
      () => {
        const state = allocateSharedState(8, 2);
        const owner = new SharedRegistry(state);
        const view = SharedRegistry.view(state, 1, { onConnectFailed: (key) => owner.noteConnectFailed(key) });
        return { owner, view };
      },
    ],
  ];
  for (const [label, make] of makers) {
    it(`${label}: down in one cluster only, connections counted once across clusters`, () => {
      const { owner, view } = make();
      const b = backend(1);
      owner.retain([
        { backend: b, cluster: 'a' },
        { backend: b, cluster: 'b' },
      ]);
      if (view instanceof SharedRegistry && owner instanceof SharedRegistry) view.adopt(owner.slots());
      const seen: BackendState[] = [];
      owner.observe({ onConnectFailed: (s) => seen.push(s) });

      owner.setAvailable(b.id, false, 'a');
      expect(view.get(b.id, 'a').available).toBe(false);
      expect(view.get(b.id, 'b').available).toBe(true);
      expect(view.get(b.id).available).toBe(false);

      view.connected(b.id, 1);
      view.connected(b.id, 1);
      expect(owner.get(b.id, 'a').active).toBe(2);
      expect(owner.get(b.id, 'b').active).toBe(2);
      view.closed(b.id);
      expect(owner.get(b.id).active).toBe(1);

      view.connectFailed(b.id, 'b');
      expect(owner.get(b.id, 'b').failures).toBe(1);
      expect(owner.get(b.id, 'a').failures).toBe(0);
      expect(seen.map((s) => [s.cluster, s.failures])).toEqual([['b', 1]]);

      owner.setAvailable(b.id, true, 'a');
      expect(view.get(b.id, 'a').available).toBe(true);
      expect(owner.clusters(b.id).map((s) => s.cluster)).toEqual(['a', 'b']);
    });
  }

  it('a backend marked down without a cluster is down for clusters seen later too', () => {
    const r = new LocalRegistry();
    r.setAvailable('127.0.0.1:1', false);
    expect(r.get('127.0.0.1:1', 'late').available).toBe(false);
    r.setAvailable('127.0.0.1:1', true);
    expect(r.get('127.0.0.1:1', 'late').available).toBe(true);
  });

  it('a reload that drops a cluster drops its record, not the backend', () => {
    const r = new LocalRegistry();
    const b = backend(1);
    r.retain([
      { backend: b, cluster: 'a' },
      { backend: b, cluster: 'b' },
    ]);
    r.setAvailable(b.id, false, 'b');
    expect(r.get(b.id).available).toBe(false);
    r.retain([{ backend: b, cluster: 'a' }]);
    expect(r.clusters(b.id).map((s) => s.cluster)).toEqual(['a']);
    expect(r.get(b.id).available).toBe(true);
  });
});
