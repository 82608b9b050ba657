/**
 * The fallback backend when nginx is not installed: `node node-backend.ts PORT`.
 * A tuned node:http server answering GET /small with a fixed body and GET /1m with 1 MiB,
 * both from buffers built once; keep-alive is held long enough for the idle scenario.
 */
import { createServer } from 'node:http';
import { SMALL_BODY } from './scenarios-shared.ts';

const port = Number(process.argv[2]);
const small = Buffer.from(SMALL_BODY);
const big = Buffer.alloc(1 << 20, 'x');
const server = createServer({ keepAliveTimeout: 300_000, requestTimeout: 0, headersTimeout: 60_000 }, (req, res) => {
  const body = req.url === '/1m' ? big : small;
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
  res.end(body);
});
server.maxHeadersCount = 0;
server.listen({ host: '127.0.0.1', port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
