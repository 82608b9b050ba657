/**
 * A fixed-count HTTP/1 client for `bench/cost.ts`, run as its own process so its CPU is not the
 * target's: `node fixed-client.ts PORT MODE CONNS TOTAL`, MODE `keepalive` (CONNS keep-alive
 * connections share TOTAL GET /small), `newconn` (CONNS at a time, every request on a new
 * connection with `Connection: close`) or `big` (GET /1m on CONNS keep-alive connections).
 * Prints the elapsed milliseconds when all TOTAL responses are in. PORT may be a comma-separated
 * list (cost.ts `--paired`): every port then gets CONNS connections and TOTAL requests of its
 * own, all at the same time.
 */
import { connect, type Socket } from 'node:net';
import { BIG_PATH, BIG_SIZE, SMALL_BODY, SMALL_PATH } from './scenarios-shared.ts';

const [ports, mode, conns, total] = [
  process.argv[2]!.split(',').map(Number),
  process.argv[3],
  Number(process.argv[4]),
  Number(process.argv[5]),
];
const big = mode === 'big';
const close = mode === 'newconn';
const request = Buffer.from(
  `GET ${big ? BIG_PATH : SMALL_PATH} HTTP/1.1\r\nHost: bench.test\r\n${close ? 'Connection: close\r\n' : ''}\r\n`,
);
let finished = 0;
const t0 = performance.now();

/** Bytes of the body seen in a response (the head ends at the first CRLFCRLF). */
function runConnection(port: number, counts: { started: number; done: number }): void {
  let socket: Socket | undefined;
  let seen = 0;
  let headDone = false;
  let want = big ? BIG_SIZE : SMALL_BODY.length;
  const next = () => {
    if (counts.started >= total) {
      socket?.destroy();
      return;
    }
    counts.started++;
    seen = 0;
    headDone = false;
    if (socket === undefined || close) {
      socket?.destroy();
      socket = connect({ port, host: '127.0.0.1', noDelay: true });
      socket.on('data', onData);
      socket.on('error', (e) => {
        console.error(e.message);
        process.exit(1);
      });
    }
    socket.write(request);
  };
  let tail = '';
  const onData = (chunk: Buffer) => {
    if (!headDone) {
      const text = tail + chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) {
        tail = text;
        return;
      }
      tail = '';
      headDone = true;
      seen = text.length - end - 4;
      want = big ? BIG_SIZE : SMALL_BODY.length;
    } else seen += chunk.length;
    if (seen >= want) {
      if (++counts.done === total && ++finished === ports.length) {
        console.log((performance.now() - t0).toFixed(1));
        process.exit(0);
      }
      next();
    }
  };
  next();
}
for (const port of ports) {
  const counts = { started: 0, done: 0 };
  for (let i = 0; i < conns; i++) runConnection(port, counts);
}
