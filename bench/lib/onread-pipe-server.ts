/**
 * A floor experiment for 1 MiB responses (issue 18, `big`): the bare pipe of pipe-server.ts, but
 * the upstream socket reads into a buffer of its own that is reused (net's `onread`) instead of
 * a new 64 KiB allocation per read. `node onread-pipe-server.ts PORT BACKEND_PORT`.
 *
 * Each read is written to the client at once. After each read net asks for the buffer of the
 * next one: the same buffer when that write has completed (the client's `writableLength` is 0),
 * else a new one, since the pending write still refers to the bytes in the old one. While
 * bytes wait to be written past the client's highWaterMark, reading stops until its 'drain'. Client → backend is piped
 * as in pipe-server.ts (an accepted socket has no `onread`).
 *
 * Not a floor the router is judged against: it shows what reused read buffers are worth in
 * Node, and what one buffer per upstream socket, kept while the connection is idle, costs (the
 * `idle` row). The router shares one buffer instead (src/data-path/own-reads.ts). bench/README, cost
 * table, "Reused read buffers".
 */
import { connect, createServer, type Socket } from 'node:net';

const port = Number(process.argv[2]);
const backendPort = Number(process.argv[3]);
const SIZE = 64 * 1024;

const server = createServer((c) => {
  let buf: Buffer | undefined;
  const resume = () => b.resume();
  const b: Socket = connect({
    host: '127.0.0.1',
    port: backendPort,
    noDelay: true,
    onread: {
      buffer: () => {
        if (buf === undefined || c.writableLength > 0) buf = Buffer.allocUnsafe(SIZE);
        return buf;
      },
      callback: (n: number, chunk: Uint8Array) => {
        // A 64 KiB write is over the highWaterMark, so write() says false even when the kernel
        // took it all at once: only bytes still pending stop the reads.
        if (c.write(chunk.subarray(0, n)) || c.writableLength === 0) return true;
        c.once('drain', resume);
        return false;
      },
    },
  });
  const destroyBoth = () => {
    c.destroy();
    b.destroy();
  };
  c.on('error', destroyBoth);
  b.on('error', destroyBoth);
  c.pipe(b);
  b.on('end', () => c.end());
});
server.listen({ host: '127.0.0.1', port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
