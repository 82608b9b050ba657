/**
 * The floor of any L7 router (issue 18's newconn experiment): a bare Node pipe that reads
 * before it connects. `node peek-pipe-server.ts PORT BACKEND_PORT [parse]`.
 *
 * - Without `parse` (`node-peek-pipe`): accept, wait for the client's first read, connect to
 *   the backend with noDelay, write that chunk, then c.pipe(b).pipe(c). No parsing at all: it
 *   differs from pipe-server.ts only in the order (read first, then connect), which is what
 *   every router that picks a backend from the request must do.
 * - With `parse` (`node-peek-parse-pipe`): the minimum HTTP/1 work on top: reads are gathered
 *   until the head's end (CRLFCRLF) is found, the head goes through llhttp once (the same WASM
 *   module and binding as the router's cross-check, src/peek/llhttp.ts: no strings), a refused
 *   head closes the connection; then connect, write, pipe as above.
 *
 * Default options, destroy both on error, like pipe-server.ts. Do not tune this file: it is a
 * floor the router is measured against.
 */
import { connect, createServer, type Socket } from 'node:net';
import { llhttpHead } from '../../src/peek/llhttp.ts';

const port = Number(process.argv[2]);
const backendPort = Number(process.argv[3]);
const parse = process.argv[4] === 'parse';
const CRLFCRLF = Buffer.from('\r\n\r\n');

function forward(c: Socket, first: Buffer): void {
  const b = connect({ host: '127.0.0.1', port: backendPort, noDelay: true });
  const destroyBoth = () => {
    c.destroy();
    b.destroy();
  };
  b.on('error', destroyBoth);
  c.on('error', destroyBoth);
  b.write(first);
  c.pipe(b).pipe(c);
}

const server = createServer((c) => {
  c.on('error', () => c.destroy());
  let head: Buffer | undefined;
  const onData = (chunk: Buffer) => {
    if (parse) {
      head = head === undefined ? chunk : Buffer.concat([head, chunk]);
      const end = head.indexOf(CRLFCRLF);
      if (end === -1) return;
      if (!llhttpHead('REQUEST', head, 0, end + 4).ok) {
        c.destroy();
        return;
      }
      chunk = head;
    }
    c.removeListener('data', onData);
    c.pause();
    forward(c, chunk);
  };
  c.on('data', onData);
});
server.listen({ host: '127.0.0.1', port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
