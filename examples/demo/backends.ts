/**
 * Small demo backends for the quick start: each answers with its name, the Host and the path it
 * saw, so `curl` through the router shows who served the request.
 */
import { createServer, type Server } from 'node:http';
import { listenError } from '../../src/listener/bind.ts';

export const DEMO_BACKENDS: ReadonlyArray<readonly [name: string, port: number]> = [
  ['web-dc1', 9001],
  ['web-dc2', 9002],
  ['static', 9003],
  ['canary', 9004],
  ['api', 9005],
];

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
