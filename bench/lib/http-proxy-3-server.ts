/**
 * http-proxy-3 (the maintained rewrite of node-http-proxy) with a keep-alive agent, as the
 * `node-http-proxy` row is run. `node http-proxy-3-server.ts PORT BACKEND_PORT`. Reported, not a target.
 */
import { Agent, createServer } from 'node:http';
import { createProxyServer } from 'http-proxy-3';

const port = Number(process.argv[2]);
const backendPort = Number(process.argv[3]);
const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
const proxy = createProxyServer({ target: `http://127.0.0.1:${backendPort}`, agent });
proxy.on('error', (_err, _req, res) => {
  if ('writeHead' in res && !res.headersSent) res.writeHead(502);
  res.end();
});
const server = createServer({ keepAliveTimeout: 300_000, requestTimeout: 0 }, (req, res) => proxy.web(req, res));
server.listen({ host: '127.0.0.1', port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
