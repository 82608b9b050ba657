/**
 * The live explainer's reading of backend state (issue 45 item 1), in process on a real router:
 * a fleet-scoped drain and weight (app/fleet/backend-state.ts, the layers the admin calls write)
 * say their layer, who and when; with no candidate taking traffic the answer is no route with the
 * all-healthy pick beside it; and explaining writes nothing to the registry (registry-view.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainRoute, type RouteExplanation } from '../../app/explain/explain.ts';
import { openLiveExplain } from '../../app/explain/live.ts';
import { registryView } from '../../app/explain/registry-view.ts';
import { BackendStates } from '../../app/fleet/backend-state.ts';
import { InternalError } from '../../src/base/errors.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';

const HOST = 'www.example.test';
const AT = '2026-12-05T06:00:00.000Z';

describe('the live explainer reads every layer of backend state', () => {
  let a: TestBackend;
  let b: TestBackend;
  let router: TestRouter;
  let states: BackendStates;

  beforeAll(async () => {
    a = await startHttpBackend('a');
    b = await startHttpBackend('b');
    router = await startTestRouter({
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: [HOST], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: {
          c: { subclusters: { s1: { weight: 1, backends: [{ address: a.address }, { address: b.address }] } } },
        },
      },
    });
    states = new BackendStates(router.router.runtime.registry, () => 'router-1');
  });
  afterAll(async () => {
    await router.close();
    await Promise.all([a.close(), b.close()]);
  });

  async function explain(): Promise<RouteExplanation> {
    const { runtime } = router.router;
    const live = await openLiveExplain(runtime.engine, runtime.registry, { overrides: (id) => states.view(id) });
    try {
      return explainRoute(live.engine, { host: HOST });
    } finally {
      await live.close();
    }
  }
  const one = (e: RouteExplanation, id: string) => e.cluster!.subclusters[0]!.backends.find((x) => x.id === id)!;

  it('a fleet drain and a fleet weight name their layer, who set them and when', async () => {
    states.putFleet(a.address, { state: 'drain', weight: undefined, setBy: 'router-2', setAt: AT });
    states.putFleet(b.address, { state: 'enable', weight: 5, setBy: 'router-3', setAt: AT });
    const e = await explain();
    expect(e.backendState).toBe('live');
    expect(e.chosen?.backend).toBe(b.address);
    expect(one(e, a.address)).toMatchObject({
      state: 'draining',
      takesTraffic: false,
      why: `drained (fleet, by router-2 at ${AT})`,
    });
    expect(one(e, b.address)).toMatchObject({
      takesTraffic: true,
      effectiveWeight: 5,
      why: `weight 5 (admin override of 1, fleet, by router-3 at ${AT})`,
    });
    expect(e.allHealthy).toEqual({
      chosen: a.address,
      note: `with every backend healthy at its configured weight, attempt 1 would go to ${a.address} (now drained (fleet, by router-2 at ${AT}))`,
    });
    states.replaceFleet(new Map());
  });

  it('with no candidate taking traffic: no route, and the all-healthy pick beside it', async () => {
    states.setLocal(a.address, { kind: 'mode', mode: 'disabled' });
    states.setLocal(b.address, { kind: 'weight', weight: 0 });
    const e = await explain();
    expect(e.routed).toBe(false);
    expect(e.reason).toBe('the operator refused: no_backend (no candidate takes traffic now)');
    expect(one(e, a.address).why).toMatch(/^disabled \(local, by router-1 at /);
    expect(one(e, b.address).why).toMatch(/^weight 0 \(admin override of 1, local, by router-1 at /);
    expect(e.allHealthy?.chosen).toBe(a.address);
    states.setLocal(a.address, { kind: 'mode', mode: 'up' });
    states.setLocal(b.address, { kind: 'weight', weight: undefined });
    // Leaving disabled restarts a's checks from down: it is back after a probe, and the answers agree.
    await eventually(async () => (await explain()).allHealthy === undefined, 10_000, 'a back after enable');
    expect((await explain()).chosen?.backend).toBe(a.address);
  });

  it('explaining writes nothing: no record is created, every setter is refused', () => {
    const { registry } = router.router.runtime;
    const view = registryView(registry);
    expect(view.get('192.0.2.1:80', 'c')).toMatchObject({ available: true, mode: 'up', weightOverride: undefined });
    expect(registry.has('192.0.2.1:80')).toBe(false);
    expect(() => view.setMode(a.address, 'draining')).toThrow(InternalError);
    expect(() => view.connectFailed(a.address, 'c')).toThrow(InternalError);
    expect(registry.get(a.address).mode).toBe('up');
  });
});
