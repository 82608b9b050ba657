/**
 * The two layers of a backend's admin state (app/fleet/backend-state.ts) over a real
 * LocalRegistry: the fleet wins setting by setting, each layer is cleared in its own scope, a
 * fleet record waits for a backend the registry does not list, and a reload that drops a
 * backend drops its local record while its fleet record applies again when it comes back.
 * The records' JSON form (backend-state-record.ts) is read back as written and bad ones refused.
 */
import { describe, expect, it } from 'vitest';
import { BackendStates } from '../../app/fleet/backend-state.ts';
import { change, type OverrideRecord, parse, serialize } from '../../app/fleet/backend-state-record.ts';
import { LocalRegistry } from '../../src/registry/local.ts';

const AT = new Date('2026-12-05T02:00:00.000Z');
const fleet = (state: OverrideRecord['state'], weight?: number): OverrideRecord => ({
  state,
  weight,
  setBy: 'r2',
  setAt: AT.toISOString(),
});

function setup() {
  const registry = new LocalRegistry();
  registry.retain(['a:1', 'b:1']);
  const states = new BackendStates(registry, () => 'r1');
  const got = (id: string) => {
    const s = registry.get(id);
    return { mode: s.mode, weight: s.weightOverride, ...states.view(id) };
  };
  return { registry, states, got };
}

describe('backend states: local and fleet layers', () => {
  it('takes each setting from the fleet when it sets it, else from local, else the config', () => {
    const { states, got } = setup();
    states.setLocal('a:1', { kind: 'mode', mode: 'draining' }, AT);
    expect(got('a:1')).toMatchObject({ mode: 'draining', modeScope: 'local', weightScope: null });
    expect(got('a:1').overrides.local).toEqual({ state: 'drain', weight: null, setBy: 'r1', setAt: AT.toISOString() });
    states.putFleet('a:1', fleet('enable', 5));
    expect(got('a:1')).toMatchObject({ mode: 'draining', weight: 5, modeScope: 'local', weightScope: 'fleet' });
    states.putFleet('a:1', fleet('disable', 5));
    expect(got('a:1')).toMatchObject({ mode: 'disabled', modeScope: 'fleet' });
    // A local enable clears the local layer only: the fleet still disables.
    states.setLocal('a:1', { kind: 'mode', mode: 'up' });
    expect(got('a:1')).toMatchObject({ mode: 'disabled', overrides: { local: null } });
    states.setLocal('a:1', { kind: 'weight', weight: 2 });
    expect(got('a:1')).toMatchObject({ weight: 5, weightScope: 'fleet' });
    states.putFleet('a:1', undefined);
    expect(got('a:1')).toMatchObject({ mode: 'up', weight: 2, modeScope: null, weightScope: 'local' });
    states.setLocal('a:1', { kind: 'weight', weight: undefined });
    expect(got('a:1')).toMatchObject({ mode: 'up', weight: undefined, overrides: { fleet: null, local: null } });
  });

  it('holds a fleet record for a backend not listed, applies it when a reload lists it, drops local records of gone backends', () => {
    const { registry, states, got } = setup();
    states.replaceFleet(new Map([['c:1', fleet('drain')]]));
    expect(registry.has('c:1')).toBe(false);
    states.setLocal('b:1', { kind: 'mode', mode: 'disabled' });
    registry.retain(['a:1', 'c:1']);
    states.retained();
    expect(got('c:1')).toMatchObject({ mode: 'draining', modeScope: 'fleet' });
    registry.retain(['a:1', 'b:1', 'c:1']);
    states.retained();
    expect(got('b:1')).toMatchObject({ mode: 'up', overrides: { local: null } });
    // A first load that no longer has c:1 puts it back up.
    states.replaceFleet(new Map());
    expect(got('c:1')).toMatchObject({ mode: 'up', modeScope: null });
  });

  it('a change that leaves nothing to say is no record; records read back as written', () => {
    expect(change(undefined, { kind: 'mode', mode: 'up' }, 'r1', AT)).toBeUndefined();
    const drained = change(undefined, { kind: 'mode', mode: 'draining' }, 'r1', AT)!;
    const weighted = change(drained, { kind: 'weight', weight: 3 }, 'r2', AT)!;
    expect(weighted).toEqual({ state: 'drain', weight: 3, setBy: 'r2', setAt: AT.toISOString() });
    expect(
      change(change(weighted, { kind: 'mode', mode: 'up' }, 'r1', AT), { kind: 'weight', weight: undefined }, 'r1', AT),
    ).toBeUndefined();
    expect(JSON.parse(serialize(drained))).toEqual({ state: 'drain', setBy: 'r1', setAt: AT.toISOString() });
    expect(parse(serialize(weighted))).toEqual(weighted);
    for (const bad of [
      'nope',
      '[]',
      '{"state":"off","setBy":"r","setAt":"t"}',
      '{"state":"drain","weight":-1,"setBy":"r","setAt":"t"}',
      '{"state":"drain"}',
    ]) {
      expect(parse(bad)).toBeUndefined();
    }
  });
});
