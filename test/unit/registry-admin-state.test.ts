/**
 * The admin state in the backend registry (issue 19): `setMode` and `setWeight` on the owner
 * are what every thread's operators read (a worker's view shares the slot), `available` folds
 * the mode in while `healthy` keeps the health verdict, enable restarts slow start, a weight
 * change bumps the epoch pools are rebuilt on, and the state goes with the backend.
 */
import { describe, expect, it } from 'vitest';
import { poolOf } from '../../operators/lib/pool.ts';
import type { BackendRegistry } from '../../src/contracts/backend-registry.ts';
import type { SubCluster } from '../../src/contracts/types.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { allocateSharedState, SharedRegistry } from '../../src/registry/shared.ts';

const A = '127.0.0.1:9001';
const B = '127.0.0.1:9002';
const keys = [
  { backend: { id: A }, cluster: 'web' },
  { backend: { id: B }, cluster: 'web' },
] as never[];

function registries(): [string, BackendRegistry, BackendRegistry][] {
  let t = 1000;
  const local = new LocalRegistry(() => t);
  const owner = new SharedRegistry(allocateSharedState(8, 2), { now: () => t++ });
  owner.retain(keys);
  const view = SharedRegistry.view(owner.shared, 0);
  view.adopt(owner.slots());
  local.retain(keys);
  return [
    ['local', local, local],
    ['shared (owner → worker view)', owner, view],
  ];
}

describe.each(registries())('%s', (_name, owner, reader) => {
  it('drain and disable make the backend unavailable but keep it healthy; enable restores it', () => {
    owner.setMode(A, 'draining');
    expect(reader.get(A, 'web')).toMatchObject({ mode: 'draining', available: false, healthy: true });
    expect(reader.get(A)).toMatchObject({ mode: 'draining', available: false });
    expect(reader.get(B, 'web').available).toBe(true);
    owner.setMode(A, 'disabled');
    expect(reader.get(A, 'web')).toMatchObject({ mode: 'disabled', available: false });
    owner.setMode(A, 'up');
    expect(reader.get(A, 'web')).toMatchObject({ mode: 'up', available: true });
    expect(owner.get(A, 'web').upSince).toBeGreaterThan(0);
  });

  it('a health-down backend stays unavailable when enabled', () => {
    owner.setAvailable(B, false, 'web');
    owner.setMode(B, 'draining');
    owner.setMode(B, 'up');
    expect(reader.get(B, 'web')).toMatchObject({ available: false, healthy: false });
    owner.setAvailable(B, true, 'web');
  });

  it('a weight override replaces the configured weight in rebuilt pools', () => {
    const sub = {
      name: 's1',
      weight: 1,
      backends: [
        { id: A, weight: 3 },
        { id: B, weight: 1 },
      ],
    } as unknown as SubCluster;
    const before = poolOf(reader, sub, 'web');
    expect([...before.weights]).toEqual([3, 1]);
    const epoch = reader.weightEpoch();
    owner.setWeight(A, 0);
    expect(reader.weightEpoch()).not.toBe(epoch);
    expect(reader.get(A).weightOverride).toBe(0);
    const after = poolOf(reader, sub, 'web');
    expect(after).not.toBe(before);
    expect([...after.weights]).toEqual([0, 1]);
    owner.setWeight(A, undefined);
    expect([...poolOf(reader, sub, 'web').weights]).toEqual([3, 1]);
  });

  it('the state is dropped with the backend', () => {
    owner.setMode(A, 'draining');
    owner.setWeight(A, 9);
    owner.retain(keys.slice(1));
    owner.retain(keys);
    expect(owner.get(A)).toMatchObject({ mode: 'up', weightOverride: undefined });
  });
});
