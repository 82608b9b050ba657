/**
 * What Node users run today: node-http-proxy (or its maintained rewrite http-proxy-3, same API)
 * with a keep-alive agent. `node http-proxy-server.ts PORT BACKEND_PORT [http-proxy|http-proxy-3]`.
 * Reported, not a target.
 */
import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** The part of the API both packages share. */
interface Proxy {
  on(event: 'error', listener: (err: Error, req: IncomingMessage, res: ServerResponse | object) => void): void;
  web(req: IncomingMessage, res: ServerResponse): void;
}
type CreateProxy = (options: { target: string; agent: Agent }) => Proxy;

const port = Number(process.argv[2]);
const backendPort = Number(process.argv[3]);
const flavour = process.argv[4] ?? 'http-proxy';
const createProxyServer = (flavour === 'http-proxy-3'
  ? (await import('http-proxy-3')).createProxyServer
  : (await import('http-proxy')).default.createProxyServer) as unknown as CreateProxy;
const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
const proxy = createProxyServer({ target: `http://127.0.0.1:${backendPort}`, agent });
proxy.on('error', (_err, _req, res) => {
  if (!('writeHead' in res)) return;
  if (!res.headersSent) res.writeHead(502);
  res.end();
});
const server = createServer({ keepAliveTimeout: 300_000, requestTimeout: 0 }, (req, res) => proxy.web(req, res));
server.listen({ host: '127.0.0.1', port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
