/**
 * A Node proxy people pick today: Fastify with `@fastify/http-proxy` (undici connection pools
 * under @fastify/reply-from), defaults otherwise, logging off.
 * `node fastify-proxy-server.ts PORT BACKEND_PORT`. Reported, not a target.
 */
import proxy from '@fastify/http-proxy';
import Fastify from 'fastify';

const port = Number(process.argv[2]);
const backendPort = Number(process.argv[3]);
const server = Fastify({ logger: false, keepAliveTimeout: 300_000, requestTimeout: 0 });
await server.register(proxy, { upstream: `http://127.0.0.1:${backendPort}` });
await server.listen({ host: '127.0.0.1', port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
