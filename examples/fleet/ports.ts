/**
 * The example's loopback ports: the defaults written in this folder's configs, and, with
 * `--free-ports`, a free port for each (so the example runs beside anything, and in a test).
 *
 * 1. `DEFAULT_PORTS` names every port the configs and run.ts use.
 * 2. `choosePorts(free)` keeps the defaults, or binds and releases a free loopback port for each.
 * 3. `remap(text, ports)` rewrites a config text: each `127.0.0.1:<default>` and each
 *    `"httpPort": <default>` / `"tlsPort": <default>` (pebble.json) gets the chosen port.
 */
import { createServer } from 'node:net';

/** Every port of the example, by what listens there. */
export const DEFAULT_PORTS = {
  haproxyHttp: 8080,
  haproxyTls: 8443,
  haproxyStats: 8404,
  web1: 18081,
  web2: 18082,
  web3: 18083,
  tls1: 18441,
  tls2: 18442,
  tls3: 18443,
  admin1: 19901,
  admin2: 19902,
  admin3: 19903,
  backendA: 19001,
  backendB: 19002,
  etcd: 12379,
  etcdPeer: 12380,
  redis: 16379,
  pebble: 14000,
  pebbleManagement: 15000,
  dns: 18053,
  dnsManagement: 18055,
} as const;

export type PortName = keyof typeof DEFAULT_PORTS;
export type Ports = Record<PortName, number>;

/** A loopback port that was free a moment ago (bound then released). */
function freePort(): Promise<number> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The defaults, or a free port for each when `free`. */
export async function choosePorts(free: boolean): Promise<Ports> {
  const ports = { ...DEFAULT_PORTS } as Ports;
  if (!free) return ports;
  const taken = new Set<number>();
  for (const name of Object.keys(ports) as PortName[]) {
    let p = await freePort();
    while (taken.has(p)) p = await freePort();
    taken.add(p);
    ports[name] = p;
  }
  return ports;
}

/** `text` with every default port (as `127.0.0.1:N` or `"httpPort": N`) replaced by the chosen one. */
export function remap(text: string, ports: Ports): string {
  const byDefault = new Map<number, number>();
  for (const name of Object.keys(DEFAULT_PORTS) as PortName[]) byDefault.set(DEFAULT_PORTS[name], ports[name]);
  return text.replace(
    /(127\.0\.0\.1:|"(?:httpPort|tlsPort)": )(\d+)/g,
    (_, before: string, port: string) => `${before}${byDefault.get(Number(port)) ?? port}`,
  );
}
