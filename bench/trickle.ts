/**
 * Trickled heads (issue 17 item 9): the CPU the peek costs when a head arrives one byte per
 * read, against a bare Node reader of the same bytes, in one run.
 *
 *   client ──1 byte──► server socket ──data──► reader under test
 *      ▲                                            │
 *      └──────── next byte once this read is seen ──┘   (so every read carries exactly one byte)
 *
 * Readers: `bare` (a 'data' listener that counts bytes: Node's own per-read cost), `peek`
 * (src/peek/peek.ts peekSocket: growing buffer + incremental sniffers) and `concat` (what the
 * peek did before: `Buffer.concat([buffer, chunk])` on every read, for reference). Client and
 * server share this process, so the client's cost is in every row alike; the ratio to `bare` is
 * what matters. Heads: HTTP/1, a TLS ClientHello over several records, h2c HEADERS +
 * CONTINUATION, each `--kib` KiB.
 *
 * Usage: node bench/trickle.ts [--kib 64] [--rounds 3]
 */
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { FLAG, FRAME } from '../src/peek/h2-frames.ts';
import { peekSocket } from '../src/peek/peek.ts';
import { block, frame, prelude } from '../test/fixtures/h2/build.ts';
import { ext, handshake, helloBody, records, sniExt } from '../test/fixtures/tls/hello-builder.ts';

const { values } = parseArgs({ options: { kib: { type: 'string' }, rounds: { type: 'string' } } });
const KIB = Number(values.kib ?? 64);
const ROUNDS = Number(values.rounds ?? 3);
const PAD = KIB * 1024;
const MAX = 2 * PAD + 16_384;

function http1(): Buffer {
  return Buffer.from(`GET /x HTTP/1.1\r\nHost: trickle.test\r\nX-Pad: ${'p'.repeat(PAD)}\r\n\r\n`, 'latin1');
}

function tls(): Buffer {
  const message = handshake(helloBody([sniExt('trickle.test'), ext(21, Buffer.alloc(Math.min(PAD, 65_480)))]));
  const cuts: number[] = [];
  for (let at = 16_000; at < message.length; at += 16_000) cuts.push(at);
  return records(message, cuts);
}

function h2c(): Buffer {
  const fields = block([
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/x'],
    [':authority', 'trickle.test'],
    ['x-pad', 'p'.repeat(PAD)],
  ]);
  const frames: Buffer[] = [prelude()];
  for (let at = 0; at < fields.length; at += 16_000) {
    const last = at + 16_000 >= fields.length;
    const type = at === 0 ? FRAME.HEADERS : FRAME.CONTINUATION;
    frames.push(
      frame(
        type,
        (last ? FLAG.END_HEADERS : 0) | (at === 0 ? FLAG.END_STREAM : 0),
        1,
        fields.subarray(at, at + 16_000),
      ),
    );
  }
  return Buffer.concat(frames);
}

type Reader = 'bare' | 'peek' | 'concat';

/** Arms the reader on the server side; resolves once it has seen every byte (or decided). */
function arm(reader: Reader, socket: Socket, total: number): Promise<void> {
  if (reader === 'peek') {
    return peekSocket(socket, {
      peekTimeout: 600_000,
      maxHeaderBytes: MAX,
      tls: 'off',
      h2c: 'allow',
      proxy: undefined,
    }).then(() => undefined);
  }
  return new Promise((resolve) => {
    let seen = 0;
    let buffer: Buffer | undefined;
    const onData = (chunk: Buffer) => {
      if (reader === 'concat') buffer = buffer === undefined ? chunk : Buffer.concat([buffer, chunk]);
      seen += chunk.length;
      if (seen >= total) {
        socket.removeListener('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
    socket.resume();
  });
}

/** One trickled head through `reader`: CPU and wall milliseconds. */
async function once(reader: Reader, bytes: Buffer): Promise<{ cpu: number; wall: number }> {
  const server = createServer((s) => s.pause());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const client = connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', noDelay: true });
  const socket = await accepted;
  let sent = 0;
  const next = () => {
    if (sent < bytes.length) client.write(bytes.subarray(sent, ++sent));
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const done = arm(reader, socket, bytes.length);
  socket.on('data', next);
  next();
  await done;
  const wall = performance.now() - t0;
  const used = process.cpuUsage(cpu0);
  socket.destroy();
  client.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  return { cpu: (used.user + used.system) / 1000, wall };
}

const heads: Array<[string, () => Buffer]> = [
  ['http1', http1],
  ['tls', tls],
  ['h2c', h2c],
];
const readers: Reader[] = ['bare', 'peek', 'concat'];

console.log(`trickled heads, one byte per read, ${ROUNDS} round(s), best CPU of each`);
for (const [name, make] of heads) {
  const bytes = make();
  const best = new Map<Reader, { cpu: number; wall: number }>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const reader of readers) {
      const r = await once(reader, bytes);
      const prev = best.get(reader);
      if (prev === undefined || r.cpu < prev.cpu) best.set(reader, r);
    }
  }
  const bare = best.get('bare')!.cpu;
  for (const reader of readers) {
    const r = best.get(reader)!;
    console.log(
      `${name.padEnd(6)} ${String(bytes.length).padStart(7)} B  ${reader.padEnd(7)} cpu ${r.cpu.toFixed(0).padStart(6)} ms  wall ${r.wall.toFixed(0).padStart(6)} ms  ×${(r.cpu / bare).toFixed(2)} bare`,
    );
  }
}
