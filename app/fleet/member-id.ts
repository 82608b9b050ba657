/** This router's default fleet id: the hostname and the first listener's bound address. */
import { hostname } from 'node:os';
import type { FleetConfig } from '../../src/config/fleet.ts';

/** `fleet.id`, or `<hostname>@<host>:<port>` of the first listener (`edge-1@0.0.0.0:443`). */
export function memberId(config: FleetConfig, first: { host: string; port: number } | undefined): string {
  if (config.id !== undefined) return config.id;
  const host = hostname().replace(/[^A-Za-z0-9._-]/g, '-');
  if (first === undefined) return host;
  const h = first.host.includes(':') ? `[${first.host}]` : first.host;
  return `${host}@${h}:${first.port}`;
}

/** `host:port` of each bound listener, IPv6 in brackets, in config order. */
export function listenerAddresses(addresses: Record<string, { host: string; port: number }>): string[] {
  return Object.values(addresses).map((a) => (a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`));
}
