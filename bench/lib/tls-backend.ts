/**
 * The fallback TLS backend when nginx is not installed: `node tls-backend.ts PORT CERT KEY`.
 * An https server answering every request with the small body; session resumption is off
 * (no tickets, no session cache reuse) so every connection is a full handshake.
 */
import { constants } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { SMALL_BODY } from './scenarios-shared.ts';

const [portArg, certFile, keyFile] = process.argv.slice(2);
const small = Buffer.from(SMALL_BODY);
const server = createServer(
  {
    cert: readFileSync(certFile as string),
    key: readFileSync(keyFile as string),
    // No tickets and no session cache: every connection is a full handshake.
    secureOptions: constants.SSL_OP_NO_TICKET,
    sessionTimeout: 0,
    keepAliveTimeout: 300_000,
  },
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': small.length });
    res.end(small);
  },
);
server.on('tlsClientError', () => {});
server.listen({ host: '127.0.0.1', port: Number(portArg), backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
