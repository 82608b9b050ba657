/**
 * The example's two backends, in run.ts's own process: each answers every request with its name
 * (`app-a`, `app-b`) and the path, so a reply through HAProxy shows which backend served it.
 */
import { createServer, type Server } from 'node:http';

/** One backend: its name and where it listens. */
export interface Backend {
  readonly name: string;
  readonly port: number;
}

/** Starts one HTTP server per backend on 127.0.0.1; resolves with a function that closes them. */
export async function startBackends(backends: readonly Backend[]): Promise<() => Promise<void>> {
  const servers: Server[] = [];
  for (const { name, port } of backends) {
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end(`${name} ${req.method} ${req.url}\n`);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    servers.push(server);
  }
  return async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  };
}
