/**
 * The access-log rows (issue 44 item 3, Cost): what writing every access line costs a
 * per-request router, and what rules that skip 99% of the lines cost instead. Optional targets
 * (`Target.optional`): they run only when named, e.g.
 *
 *   node bench/cost.ts --paired --scenarios keepalive --targets switchboard-per-request,\
 *     switchboard-per-request-access-all,switchboard-per-request-access-rules \
 *     --versus switchboard-per-request-access-all
 *
 * 1. `switchboard-per-request-access-all`: `log.access` to a file in the row's directory, no
 *    rules: every request's line serialised by pino and written.
 * 2. `switchboard-per-request-access-rules`: the same file behind the rules an operator keeps
 *    (errors, slow requests, a 1% sample of the rest); the bench's requests are fast 200s, so 99%
 *    of the lines are judged by three rules and skipped before any serialising.
 * `switchboard-per-request` (access `off`) is the floor both are measured against.
 */
import { join } from 'node:path';
import { switchboardConf, switchboardServers } from './peers.ts';
import { startSwitchboard } from './targets.ts';
import type { Target } from './types.ts';

/** The rules of row 2. */
export const SKIP_99_RULES = '[{ statuses: [5xx] }, { minDuration: 500ms }, { sample: 0.01 }]';

/** A per-request router writing its access log to a file, behind `rules` (none: every line). */
export function accessLogTarget(name: string, rules: string | undefined): Target {
  return {
    name,
    optional: true,
    available: () => undefined,
    scenarios: ['keepalive', 'newconn'],
    start: (ctx) => {
      const file = JSON.stringify(join(ctx.dir, `${name}-access.log`));
      const access = rules === undefined ? file : `{ file: ${file}, rules: ${rules} }`;
      return startSwitchboard(
        ctx,
        name,
        (p) => switchboardConf(p, 'per-request').replace('access: "off"', `access: ${access}`),
        switchboardServers(ctx.backendPort),
      );
    },
  };
}

/** Rows 1 and 2. */
export const ACCESS_LOG_TARGETS: readonly Target[] = [
  accessLogTarget('switchboard-per-request-access-all', undefined),
  accessLogTarget('switchboard-per-request-access-rules', SKIP_99_RULES),
];
