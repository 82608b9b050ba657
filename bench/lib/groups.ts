/**
 * Every group of the harness: a backend plus the targets in front of it. Scenarios name their
 * group (`Scenario.group`); a group runs only when one of its scenarios is selected.
 */
import { ACCESS_LOG_TARGETS } from './access-log-target.ts';
import { startBackend } from './backend.ts';
import { FLEET_TARGETS } from './fleet-targets.ts';
import { H2_GROUP } from './group-h2.ts';
import { TLS_GROUP } from './group-tls.ts';
import { policiesTarget } from './policies-target.ts';
import { TARGETS } from './targets.ts';
import { TRACING_TARGETS } from './tracing-target.ts';
import type { Group } from './types.ts';

/**
 * The HTTP/1.1 group: the plain backend (bench/lib/backend.ts), `TARGETS`, the policy row
 * (lib/policies-target.ts, beside `switchboard-per-request`; its own file uses targets.ts) and
 * the optional fleet rows (lib/fleet-targets.ts), access-log rows (lib/access-log-target.ts) and
 * tracing rows (lib/tracing-target.ts), run only when named.
 */
export const HTTP1_GROUP: Group = {
  name: 'http1',
  available: () => undefined,
  startBackend,
  targets: [
    ...TARGETS,
    policiesTarget('switchboard-per-request-policies'),
    ...FLEET_TARGETS,
    ...ACCESS_LOG_TARGETS,
    ...TRACING_TARGETS,
  ],
};

/** Every group, in table order. */
export const GROUPS: readonly Group[] = [HTTP1_GROUP, TLS_GROUP, H2_GROUP];
