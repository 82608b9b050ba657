/**
 * Small demo backends for the quick start: each answers with its name, the Host and the path it
 * saw, so `curl` through the router shows who served the request. Alone:
 * `node examples/demo/backends.ts` (then `npx switchboard start` in another terminal).
 */
import { createServer, type Server } from 'node:http';
import { listenError } from '../../src/listener/bind.ts';

const NAMES = ['web-dc1', 'web-dc2', 'static', 'canary', 'api'] as const;

/** Ports 9001–9005 (conf/switchboard.yaml), or the five of `DEMO_BACKEND_PORTS=p1,p2,p3,p4,p5`. */
function demoPorts(): number[] {
  const env = process.env.DEMO_BACKEND_PORTS;
  const ports = env === undefined ? [9001, 9002, 9003, 9004, 9005] : env.split(',').map(Number);
  if (ports.length !== NAMES.length || !ports.every((p) => Number.isInteger(p) && p > 0 && p < 65536)) {
    throw new Error(`DEMO_BACKEND_PORTS: expected ${NAMES.length} ports separated by commas, got ${env}`);
  }
  return ports;
}

export const DEMO_BACKENDS: ReadonlyArray<readonly [name: string, port: number]> = demoPorts().map(
  (port, i) => [NAMES[i]!, port] as const,
);

/** Starts every demo backend on 127.0.0.1; resolves with a function that stops them (a port in use rejects with one line). */
export async function startDemoBackends(): Promise<() => Promise<void>> {
  const servers: Server[] = [];
  for (const [name, port] of DEMO_BACKENDS) {
    const server = createServer((req, res) => {
      const body = `${name} answered ${req.method} ${req.headers.host ?? ''}${req.url ?? ''}\n`;
      res.writeHead(200, { 'content-type': 'text/plain', 'x-backend': name });
      res.end(body);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e) => reject(listenError(`demo backend ${name}`, '127.0.0.1', port, e)));
      server.listen(port, '127.0.0.1', () => resolve());
    });
    servers.push(server);
  }
  return async () => {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  };
}

if (import.meta.main) {
  await startDemoBackends();
  process.stdout.write(`demo backends on ${DEMO_BACKENDS.map(([n, p]) => `${n}=127.0.0.1:${p}`).join(' ')}\n`);
}
