/**
 * The floor: a bare Node `net` pipe, `node pipe-server.ts PORT BACKEND_PORT`. Exactly what the
 * issue defines: accept, connect with noDelay, c.pipe(b).pipe(c), default options, destroy both
 * on error. Do not tune this file; it is the baseline the router must beat.
 */
import { connect, createServer } from 'node:net';

const port = Number(process.argv[2]);
const backendPort = Number(process.argv[3]);
const server = createServer((c) => {
  const b = connect({ host: '127.0.0.1', port: backendPort, noDelay: true });
  const destroyBoth = () => {
    c.destroy();
    b.destroy();
  };
  c.on('error', destroyBoth);
  b.on('error', destroyBoth);
  c.pipe(b).pipe(c);
});
server.listen({ host: '127.0.0.1', port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
