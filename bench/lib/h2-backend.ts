/**
 * The fallback h2 backend when nginx is not installed: `node h2-backend.ts H2PORT H1PORT`.
 * The small body over h2c (prior knowledge) on the first port and over HTTP/1.1 on the second.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer as createH2Server } from 'node:http2';
import { SMALL_BODY } from './scenarios-shared.ts';

const [h2Port, h1Port] = process.argv.slice(2).map(Number);
const small = Buffer.from(SMALL_BODY);
const answer = (
  _req: unknown,
  res: { writeHead(s: number, h: Record<string, string | number>): void; end(b: Buffer): void },
) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': small.length });
  res.end(small);
};
createH2Server({ settings: { maxConcurrentStreams: 1000 } }, answer).listen({ host: '127.0.0.1', port: h2Port });
createHttpServer({ keepAliveTimeout: 300_000 }, answer).listen({ host: '127.0.0.1', port: h1Port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
