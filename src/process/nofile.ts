/**
 * The process's file-descriptor budget (`ulimit -n`). What one client connection may hold:
 *
 *   routing: per-connection   2       client + backend
 *   routing: per-request      2 + k   client + current (or connecting) upstream
 *                                     + k = limits.maxIdleUpstreamsPerConnection idle upstreams
 *
 * so `limits.maxConnections × that + NOFILE_RESERVE + admin.maxConnections` must fit in `nofile`
 * (the admin listener holds at most `admin.maxConnections` sockets, app/admin/connection-bounds.ts;
 * no admin section, none). A panel may state
 * its own figure (src/panel/capabilities.ts `DescriptorBudget`): the http2 panel holds 1 per connection (its
 * client socket; its upstream pools are shared per backend, see docs/configuration.md "Limits"). Node
 * raises its soft limit to the hard limit at start, so the soft limit read here is the
 * effective one.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/errors.ts';
import type { Config } from '../config/schema.ts';

/**
 * Descriptors kept for Node itself, listeners (the admin one's socket too), logs and health
 * probes; the admin listener's connections are counted apart (`adminDescriptors`).
 */
export const NOFILE_RESERVE = 32;

/** What the budget depends on: the routing mode, the limits and the admin listener's cap. */
export type NofileConfig = Pick<Config, 'routing'> & {
  readonly limits: Pick<Config['limits'], 'maxConnections' | 'maxIdleUpstreamsPerConnection'>;
  readonly admin?: Pick<NonNullable<Config['admin']>, 'maxConnections'> | undefined;
};

/** Descriptors the admin listener's connections may hold: `admin.maxConnections`, 0 without admin. */
export function adminDescriptors(config: Pick<NofileConfig, 'admin'>): number {
  return config.admin?.maxConnections ?? 0;
}

/** The effective `nofile` soft limit, or undefined where /proc is not available (not Linux). */
export function nofileLimit(): number | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  if (m === null || m[1] === 'unlimited') return undefined;
  return Number(m[1]);
}

/** The most descriptors one client connection may hold under `config` (see the table above). */
export function descriptorsPerConnection(config: NofileConfig): number {
  return 2 + (config.routing === 'per-request' ? config.limits.maxIdleUpstreamsPerConnection : 0);
}

/**
 * The largest `maxConnections` that fits in `nofile` at `perConnection` descriptors each, beside
 * `admin` admin connections.
 */
export function maxConnectionsFor(nofile: number, perConnection = 2, admin = 0): number {
  return Math.max(0, Math.floor((nofile - NOFILE_RESERVE - admin) / perConnection));
}

/**
 * Throws a ConfigError naming `limits.maxConnections` when `config` cannot fit in `nofile` at
 * `each` descriptors per connection (default: the splicing panels' figure), beside the admin
 * listener's connections and `panelReserve` descriptors the panel holds (DescriptorBudget).
 */
export function checkNofile(
  file: string,
  config: NofileConfig,
  nofile = nofileLimit(),
  each = descriptorsPerConnection(config),
  panelReserve = 0,
): void {
  if (nofile === undefined) return;
  const { maxConnections, maxIdleUpstreamsPerConnection: idle } = config.limits;
  const admin = adminDescriptors(config);
  const apart = admin + panelReserve;
  const fit = maxConnectionsFor(nofile, each, apart);
  if (maxConnections <= fit) return;
  const held = [
    `${NOFILE_RESERVE} reserved`,
    ...(admin > 0 ? [`${admin} for admin.maxConnections`] : []),
    ...(panelReserve > 0 ? [`${panelReserve} for the panel's threads and their listeners`] : []),
  ];
  const reserved = held.join(', ');
  const why =
    each <= 2
      ? `${each} each: ${each === 1 ? 'the client (upstream pools are shared)' : 'client and backend'}`
      : `${each} each: client, upstream and limits.maxIdleUpstreamsPerConnection ${idle} idle upstreams`;
  const lower =
    each <= 2
      ? `lower it to ${fit}`
      : `lower it to ${fit}, or lower maxIdleUpstreamsPerConnection (0: 2 per connection, fits ${maxConnectionsFor(nofile, 2, apart)})`;
  const also = admin > 0 ? ', lower admin.maxConnections' : '';
  throw new ConfigError(file, [
    `limits.maxConnections: ${maxConnections} connections need ${each * maxConnections + NOFILE_RESERVE + apart} ` +
      `file descriptors (${why}; ${reserved}) but the nofile limit is ${nofile}; ${lower}${also} or raise ulimit -n`,
  ]);
}
