/**
 * The fleet rows (issue 43, Cost): what `fleet:` and a fleet-scoped limit cost a per-request
 * router, against the same router in the same run. Optional targets (`Target.optional`): they run
 * only when named, e.g.
 *
 *   node bench/cost.ts --paired --scenarios keepalive --targets switchboard-per-request,\
 *     switchboard-per-request-fleet,switchboard-per-request-local-limit,\
 *     switchboard-per-request-fleet-limit --versus switchboard-per-request-local-limit
 *
 * 1. `switchboard-per-request-fleet`: `fleet:` on a real etcd (test/harness/etcd.ts, started with
 *    the row), no fleet-scoped rule: against `switchboard-per-request`, the cost of membership.
 * 2. `switchboard-per-request-local-limit`: one `rate-limit` keyed by client address at the
 *    request point, `scope: local`, its rate far above the bench's (every request takes from its
 *    bucket, none is refused).
 * 3. `switchboard-per-request-fleet-limit`: the same rule with `scope: fleet` on a real etcd and a
 *    real Redis on loopback (test/harness/redis.ts): against 2, the cost of counting in Redis
 *    (the issue asks ≥ 0.7× keep-alive). The Redis server's own CPU is not in the row's pids.
 */
import { startEtcd } from '../../test/harness/etcd.ts';
import { startRedis } from '../../test/harness/redis.ts';
import { switchboardConf, switchboardServers } from './peers.ts';
import { startSwitchboard } from './targets.ts';
import type { BenchContext, Running, Target } from './types.ts';

/** The rule of rows 2 and 3. */
function limitYaml(scope: 'local' | 'fleet'): string {
  return `policies:
  - { name: per-client, use: rate-limit, point: request, options: { key: client-ip, rate: 10000000/s, burst: 10000000, scope: ${scope} } }
`;
}

/** A per-request router with `extra` config, and the servers it needs started first (stopped after it). */
function fleetRow(name: string, withEtcd: boolean, withRedis: boolean, policies: string): Target {
  return {
    name,
    optional: true,
    available: () => undefined,
    scenarios: ['keepalive', 'newconn'],
    start: async (ctx: BenchContext): Promise<Running> => {
      const etcd = withEtcd ? await startEtcd() : undefined;
      const redis = withRedis ? await startRedis() : undefined;
      let fleet = '';
      if (etcd !== undefined) {
        fleet = `fleet:\n  id: ${name}\n  etcd: { endpoints: [${etcd.endpoint}], prefix: /bench/${name}/ }\n`;
        if (redis !== undefined) fleet += `  redis: { url: ${redis.url} }\n`;
      }
      try {
        const running = await startSwitchboard(
          ctx,
          name,
          (p) => `${switchboardConf(p, 'per-request')}${fleet}${policies}`,
          switchboardServers(ctx.backendPort),
        );
        return {
          port: running.port,
          pids: () => running.pids(),
          stop: async () => {
            await running.stop();
            await redis?.close();
            await etcd?.close();
          },
        };
      } catch (e) {
        await redis?.close();
        await etcd?.close();
        throw e;
      }
    },
  };
}

/** The three fleet rows. */
export const FLEET_TARGETS: readonly Target[] = [
  fleetRow('switchboard-per-request-fleet', true, false, ''),
  fleetRow('switchboard-per-request-local-limit', false, false, limitYaml('local')),
  fleetRow('switchboard-per-request-fleet-limit', true, true, limitYaml('fleet')),
];
