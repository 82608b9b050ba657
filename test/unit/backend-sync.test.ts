/**
 * The runtime's sync after a snapshot swap (app/runtime/backend-sync.ts): a book listing its backends in
 * groups kept while unchanged is synced by the change only, and the registry and the health
 * checks end exactly as the whole sync (`retain` + `update` over every entry) leaves them:
 * records, their order, slow start, checkers, their cluster order, policy and probing, over a
 * long random run of reloads (backends moved, clusters added, removed, re-ordered, policies
 * changed, backends marked down), for the local and the shared registry.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BackendSync } from '../../app/runtime/backend-sync.ts';
import { seededRandom } from '../../src/base/random.ts';
import { healthCheckSchema } from '../../src/config/cluster.ts';
import type { BackendRegistry } from '../../src/contracts/backend-registry.ts';
import type { AddressBook, Backend, BackendEntry, ClusterPolicy } from '../../src/contracts/types.ts';
import { HealthManager } from '../../src/health/index.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { allocateSharedState, SharedRegistry } from '../../src/registry/shared.ts';

const DEFAULTS = healthCheckSchema.parse({});
const policies = [1000, 2000, 3000].map(
  (interval) => ({ healthCheck: { ...DEFAULTS, interval }, proxyProtocol: 'off' }) as unknown as ClusterPolicy,
);
const backends = Array.from(
  { length: 6 },
  (_, i): Backend => ({ id: `127.0.0.1:${9000 + i}`, host: '127.0.0.1', port: 9000 + i, weight: 1, name: '' }),
);

type Group = readonly BackendEntry[];

/** A book whose current groups the test sets. */
function book(groups: () => readonly Group[]): AddressBook & { listBackends(): Iterable<BackendEntry> } {
  return {
    start: async () => {},
    close: async () => {},
    findAddresses: () => undefined,
    version: 0,
    listBackends: () => groups().flat(),
    backendGroups: () => [...groups()],
  } as unknown as AddressBook & { listBackends(): Iterable<BackendEntry> };
}

function state(registry: BackendRegistry, health: HealthManager): unknown {
  return {
    records: [...registry.all()].map((s) => [
      s.id,
      s.upSince,
      registry.clusters(s.id).map((c) => [c.cluster, c.healthy, c.upSince]),
    ]),
    checks: health.checks().map((c) => [c.id, c.clusters, c.policy.interval, c.probing]),
  };
}

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup) f();
  cleanup = [];
});

describe.each([
  ['local', (now: () => number) => new LocalRegistry(now)],
  ['shared', (now: () => number) => new SharedRegistry(allocateSharedState(64, 1), { now })],
])('BackendSync, %s registry', (_, makeRegistry) => {
  it('ends every reload as the whole sync does, touching only what changed', () => {
    let clock = 1_000;
    const now = () => clock;
    const [a, b] = [makeRegistry(now), makeRegistry(now)];
    const [ha, hb] = [new HealthManager(a), new HealthManager(b)];
    cleanup.push(
      () => ha.close(),
      () => hb.close(),
    );
    const sync = new BackendSync(a, ha);
    const random = seededRandom(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const cluster = (name: string): Group => {
      const policy = pick(policies);
      const n = 1 + Math.floor(random() * 3);
      return Array.from({ length: n }, () => ({ backend: pick(backends), policy, cluster: name }));
    };
    let groups: Group[] = Array.from({ length: 12 }, (_, i) => cluster(`c${i}`));
    let next = 12;
    const books = book(() => groups);
    let changes = 0;
    const retain = a.retain.bind(a);
    let whole = 0;
    a.retain = (keys) => {
      whole++;
      return retain(keys);
    };
    for (let round = 0; round < 400; round++) {
      clock += 10;
      const r = random();
      if (round > 0) {
        if (r < 0.4) groups[Math.floor(random() * groups.length)] = cluster(`c${Math.floor(random() * next)}`);
        else if (r < 0.55) groups.push(cluster(`c${next++}`));
        else if (r < 0.7 && groups.length > 2) groups.splice(Math.floor(random() * groups.length), 1);
        else if (r < 0.75) groups = [...groups].reverse();
        else if (r < 0.85) {
          const id = pick(backends).id;
          a.setAvailable(id, false, groups[0]![0]!.cluster);
          b.setAvailable(id, false, groups[0]![0]!.cluster);
        } else groups = [...groups]; // the same groups: nothing changed
      }
      // A cluster name listed twice (a replaced group's name reused) is not a snapshot: rename.
      const seen = new Set<string>();
      groups = groups.map((g) => {
        const out = seen.has(g[0]!.cluster!) ? cluster(`c${next++}`) : g;
        seen.add(out[0]!.cluster!);
        return out;
      });
      sync.sync(books);
      const entries = groups.flat();
      b.retain(entries);
      hb.update(
        entries.map((e) => ({
          backend: e.backend,
          cluster: e.cluster,
          policy: e.policy.healthCheck,
          proxyProtocol: 'off',
        })),
      );
      expect(state(a, ha), `round ${round}`).toEqual(state(b, hb));
      changes++;
    }
    // Most reloads went by the change: the whole sync ran for the first and a few others.
    expect(whole).toBeLessThan(changes / 2);
    expect(whole).toBeGreaterThan(0);
  });

  it('syncs whole again once a record exists that no sync listed', () => {
    const registry = makeRegistry(() => 0);
    const health = new HealthManager(registry);
    cleanup.push(() => health.close());
    const sync = new BackendSync(registry, health);
    const g1: Group = [{ backend: backends[0]!, policy: policies[0]!, cluster: 'web' }];
    const g2: Group = [{ backend: backends[1]!, policy: policies[0]!, cluster: 'api' }];
    const g3: Group = [{ backend: backends[2]!, policy: policies[0]!, cluster: 'adm' }];
    let groups: Group[] = [g1, g2, g3];
    const b = book(() => groups);
    sync.sync(b);
    registry.get('127.0.0.1:9999'); // a report for a backend no snapshot lists
    groups = [g1, g2, [{ backend: backends[3]!, policy: policies[0]!, cluster: 'adm' }]];
    sync.sync(b);
    expect([...registry.all()].map((s) => s.id)).toEqual(['127.0.0.1:9000', '127.0.0.1:9001', '127.0.0.1:9003']);
  });
});
