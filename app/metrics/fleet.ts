/**
 * The fleet gauges (`fleet:` configured, app/fleet/), read at scrape time from the fleet's own
 * state, so they cost nothing between scrapes: `switchboard_fleet_degraded` (1 while etcd cannot
 * be reached) and `switchboard_fleet_members` (live members, this router included).
 */
import { Gauge, type Registry } from 'prom-client';
import type { Fleet } from '../fleet/contract.ts';

/** Registers the two fleet gauges of `fleet` on `registry`. */
export function registerFleetMetrics(registry: Registry, fleet: Fleet): void {
  const registers = [registry];
  new Gauge({
    name: 'switchboard_fleet_degraded',
    help: '1 while the fleet cannot reach etcd (serving goes on from the last state), else 0',
    registers,
    collect() {
      this.set(fleet.degraded ? 1 : 0);
    },
  });
  new Gauge({
    name: 'switchboard_fleet_members',
    help: 'Live fleet members as the membership watch last saw them (this router included)',
    registers,
    collect() {
      this.set(fleet.liveCount());
    },
  });
}
