/**
 * The process's file-descriptor budget (`ulimit -n`). Each proxied connection holds two
 * descriptors (client and backend), so `limits.maxConnections` must fit in
 * `(nofile - NOFILE_RESERVE) / 2`. Node raises its soft limit to the hard limit at start, so the
 * soft limit read here is the effective one.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from './config/errors.ts';

/** Descriptors kept for Node itself, listeners, the admin listener, logs and health probes. */
export const NOFILE_RESERVE = 32;

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

/** The largest `maxConnections` that fits in `nofile`. */
export function maxConnectionsFor(nofile: number): number {
  return Math.max(0, Math.floor((nofile - NOFILE_RESERVE) / 2));
}

/** Throws a ConfigError naming `limits.maxConnections` when it cannot fit in `nofile`. */
export function checkNofile(file: string, maxConnections: number, nofile = nofileLimit()): void {
  if (nofile === undefined) return;
  const fit = maxConnectionsFor(nofile);
  if (maxConnections > fit) {
    throw new ConfigError(file, [
      `limits.maxConnections: ${maxConnections} connections need ${2 * maxConnections + NOFILE_RESERVE} ` +
        `file descriptors but the nofile limit is ${nofile}; lower it to ${fit} or raise ulimit -n`,
    ]);
  }
}
