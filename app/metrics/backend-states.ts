/**
 * The metrics of the backends' admin state (app/admin/backend-control.ts), registered by metrics.ts:
 *
 * - `switchboard_backend_state{backend, state}`: 1 for the state `/backends` reports (up, down,
 *   draining, disabled), 0 for the other three, so `switchboard_backend_state{state="draining"} == 1`
 *   finds drained backends.
 * - `switchboard_backend_weight_override{backend}`: the admin weight override, only for backends
 *   that have one.
 */
import { Gauge, type Registry } from 'prom-client';
import type { AdminMode, BackendRegistry, BackendState } from '../../src/contracts/backend-registry.ts';

const STATES = ['up', 'down', 'draining', 'disabled'] as const;

/** The state `/backends` reports: the admin mode when not `up`, else the health verdict. */
export function stateOf(s: BackendState): 'up' | 'down' | AdminMode {
  if (s.mode !== 'up') return s.mode;
  return s.healthy ? 'up' : 'down';
}

/** Registers the two gauges on `registers`, read from `registry` at each scrape. */
export function backendStateGauges(registers: Registry[], registry: BackendRegistry): void {
  new Gauge({
    name: 'switchboard_backend_state',
    help: 'The backend state /backends reports (up, down, draining, disabled): 1 for the current one',
    labelNames: ['backend', 'state'],
    registers,
    collect() {
      this.reset();
      for (const s of registry.all()) {
        const now = stateOf(s);
        for (const state of STATES) this.set({ backend: s.id, state }, state === now ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'switchboard_backend_weight_override',
    help: 'The weight set through the admin API (POST /backends/{id}/weight), replacing the configured one',
    labelNames: ['backend'],
    registers,
    collect() {
      this.reset();
      for (const s of registry.all()) if (s.weightOverride !== undefined) this.set({ backend: s.id }, s.weightOverride);
    },
  });
}
