/**
 * The splice's upstream reads into reused buffers (src/data-path/own-reads.ts, issue 18): one shared by
 * the thread, whose reads are copied out, or the socket's own while a large body streams. A
 * buffer must never be overwritten under a write that has not completed: every response here
 * is checked byte for byte, with bodies whose bytes depend on their position and on the
 * response (a stale or overwritten chunk shows), through sizes around the 64 KiB buffer, a
 * client that stops reading (writes wait), small reads while writes wait below the
 * highWaterMark, keep-alive (a socket's own buffer comes and goes), pipelining, and a backend
 * that answers before it is asked; on the net panel, with TLS terminated, and on the worker panel.
 */
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasOwnReads } from '../../src/data-path/own-reads.ts';
import { openBackend } from '../../src/upstream/connect.ts';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { createPki, type Pki } from '../harness/certs.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

/** The body of response `id`: `size` bytes that differ by position and by response. */
function body(id: number, size: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  let x = (id * 2654435761) >>> 0;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Writes `b` in `piece`-byte writes, one per turn of the event loop (small reads upstream). */
function trickle(socket: Socket, b: Buffer, piece: number): void {
  let at = 0;
  const step = () => {
    if (at >= b.length || socket.destroyed) return;
    socket.write(b.subarray(at, at + piece));
    at += piece;
    setImmediate(step);
  };
  step();
}

/**
 * Answers each request `GET /<id>/<size>` with that body (`GET /<id>/<size>/trickle`: in 1 KiB
 * writes); `early`: answers `/0/<size>` at connect.
 */
function serve(socket: Socket, early: number | undefined): void {
  if (early !== undefined) {
    const b = body(0, early);
    socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${b.length}\r\n\r\n`);
    socket.write(b);
  }
  let text = '';
  socket.on('data', (c: Buffer) => {
    text += c.toString('latin1');
    for (let end = text.indexOf('\r\n\r\n'); end >= 0; end = text.indexOf('\r\n\r\n')) {
      const m = /^GET \/(\d+)\/(\d+)(\/trickle)? /.exec(text);
      text = text.slice(end + 4);
      if (m === null || (early !== undefined && m[1] === '0')) continue;
      const b = body(Number(m[1]), Number(m[2]));
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${b.length}\r\n\r\n`);
      if (m[3] === undefined) socket.write(b);
      else trickle(socket, b, 1024);
    }
  });
}

/**
 * Reads responses (head + Content-Length body) from `s` in order, with one 'data' listener for
 * the socket's life; `slow` pauses the socket now and then while a response is read.
 */
class Responses {
  #chunks: Buffer[] = [];
  #length = 0;
  /** Where the body of the response being read starts and the response ends, once its head is in. */
  #bodyAt = -1;
  #end = -1;
  #reads = 0;
  #slow = false;
  #wake: (() => void) | undefined;
  #closed = false;

  constructor(s: Socket) {
    s.on('data', (c: Buffer) => {
      this.#chunks.push(c);
      this.#length += c.length;
      if (this.#slow && ++this.#reads % 8 === 0) {
        s.pause();
        setTimeout(() => s.resume(), 15);
      }
      this.#wake?.();
    });
    s.on('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
  }

  #flat(): Buffer {
    const all = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    this.#chunks = [all];
    return all;
  }

  async next(slow = false): Promise<Buffer> {
    this.#slow = slow;
    for (;;) {
      if (this.#end < 0) {
        const got = this.#flat();
        const head = got.indexOf('\r\n\r\n');
        if (head >= 0) {
          const length = Number(/Content-Length: (\d+)/i.exec(got.subarray(0, head).toString('latin1'))?.[1]);
          this.#bodyAt = head + 4;
          this.#end = head + 4 + length;
        }
      }
      if (this.#end >= 0 && this.#length >= this.#end) {
        const got = this.#flat();
        const body = got.subarray(this.#bodyAt, this.#end);
        this.#chunks = [got.subarray(this.#end)];
        this.#length -= this.#end;
        this.#end = -1;
        return body;
      }
      if (this.#closed) throw new Error(`closed after ${this.#length} bytes`);
      await new Promise<void>((r) => {
        this.#wake = r;
      });
    }
  }
}

/** A client connection: plain TCP, or TLS (verified against `ca`) on a terminating listener. */
function openOn(port: number, ca: string | undefined): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s =
      ca === undefined
        ? connect({ port, host: '127.0.0.1' })
        : tlsConnect({ port, host: '127.0.0.1', servername: 'a.test', ca });
    s.once(ca === undefined ? 'connect' : 'secureConnect', () => resolve(s));
    s.once('error', reject);
  });
}

const SIZES = [1, 100, 16_383, 16_384, 16_385, 65_535, 65_536, 65_537, 200_000, 1_048_576];

const SETUPS = [
  { name: 'net panel', panel: 'net', tls: false, routing: 'per-connection' },
  { name: 'net panel, TLS terminated', panel: 'net', tls: true, routing: 'per-connection' },
  { name: 'worker panel', panel: 'worker', tls: false, routing: 'per-connection' },
  // The links of per-request routing read the same way (panels/net/upstream-link.ts).
  { name: 'net panel, per-request routing', panel: 'net', tls: false, routing: 'per-request' },
] as const;

describe.each(SETUPS)('$name: the upstream reads into reused buffers', ({ panel, tls, routing }) => {
  let backend: TcpBackend;
  let early: TcpBackend;
  let router: TestRouter;
  let pki: Pki | undefined;
  let open: (port: number) => Promise<Socket>;

  beforeAll(async () => {
    backend = await startTcpBackend('b', (s) => serve(s, undefined));
    early = await startTcpBackend('e', (s) => serve(s, 300_000));
    pki = tls ? await createPki() : undefined;
    const leaf = await pki?.leaf('a', { dns: ['a.test', 'early.test'] });
    const ca = pki?.ca.certPem;
    open = (port) => openOn(port, ca);
    router = await startTestRouter(
      {
        panel: panel === 'worker' ? { name: 'worker', threads: 2 } : panel,
        routing,
        listeners: [
          leaf === undefined
            ? { name: 'web', address: '127.0.0.1:0' }
            : {
                name: 'web',
                address: '127.0.0.1:0',
                tls: 'terminate',
                certificates: [{ cert: leaf.cert, key: leaf.key }],
              },
        ],
        addressBook: { name: 'file', path: 'servers.yaml' },
      },
      {
        dir: await tempDir({
          'servers.yaml': `- { host: "early.test", backends: [${early.address}] }\n- { host: "*", backends: [${backend.address}] }\n`,
        }),
      },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
    await early.close();
    await pki?.close();
  });

  it('an upstream dialled for a splice reads into reused buffers; a pooled one does not', async () => {
    const plain = await new Promise<Socket>((resolve, reject) =>
      openBackend('127.0.0.1', backend.port, 5_000, { ownReads: true }, (e, s) => (e ? reject(e) : resolve(s!))),
    );
    expect(hasOwnReads(plain)).toBe(true);
    plain.destroy();
    const pooled = await new Promise<Socket>((resolve, reject) =>
      openBackend('127.0.0.1', backend.port, 5_000, {}, (e, s) => (e ? reject(e) : resolve(s!))),
    );
    expect(hasOwnReads(pooled)).toBe(false);
    pooled.destroy();
  });

  it('responses of 1 B to 1 MiB, each on a new connection, arrive byte for byte', async () => {
    for (const [i, size] of SIZES.entries()) {
      const s = await open(router.port());
      s.write(`GET /${i + 1}/${size} HTTP/1.1\r\nHost: a.test\r\n\r\n`);
      expect(sha(await new Responses(s).next()), `size ${size}`).toBe(sha(body(i + 1, size)));
      s.destroy();
    }
  });

  it('a client that stops reading: 24 MiB arrive byte for byte (writes wait, the buffer goes with them)', async () => {
    // More than loopback's socket buffers hold (a few MiB each way), so the router's writes to
    // the client stop completing at once and reading waits for 'drain': the case a reused
    // buffer must survive.
    const s = await open(router.port());
    const responses = new Responses(s);
    s.pause();
    s.write(`GET /77/${24 * 1_048_576} HTTP/1.1\r\nHost: a.test\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 300));
    s.resume();
    expect(sha(await responses.next(true))).toBe(sha(body(77, 24 * 1_048_576)));
    s.destroy();
  });

  it('small reads while writes wait under the highWaterMark: 12 MiB in 1 KiB pieces arrive byte for byte', async () => {
    // The client does not read at first, so the router's writes back up behind loopback's
    // buffers while each upstream read is small: a write that waits yet leaves room below the
    // client's highWaterMark lets reading go on, and that read must not land in its buffer.
    const s = await open(router.port());
    const responses = new Responses(s);
    s.pause();
    s.write(`GET /88/${12 * 1_048_576}/trickle HTTP/1.1\r\nHost: a.test\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 1_500));
    s.resume();
    expect(sha(await responses.next())).toBe(sha(body(88, 12 * 1_048_576)));
    s.destroy();
  });

  it('keep-alive: large and small responses in turn on one connection, slow and fast reads', async () => {
    const s = await open(router.port());
    const responses = new Responses(s);
    const sizes = [200_000, 10, 70_000, 16_384, 3, 1_048_576, 500, 65_536, 1];
    for (const [i, size] of sizes.entries()) {
      s.write(`GET /${100 + i}/${size} HTTP/1.1\r\nHost: a.test\r\n\r\n`);
      expect(sha(await responses.next(i % 2 === 0)), `response ${i}, size ${size}`).toBe(sha(body(100 + i, size)));
    }
    s.destroy();
  });

  it('pipelined: nine requests at once, the responses in order, byte for byte', async () => {
    const s = await open(router.port());
    const responses = new Responses(s);
    const sizes = [70_000, 1, 16_385, 8_000_000, 2, 65_537, 100, 4_000_000, 17];
    s.pause(); // the responses pile up behind a client that does not read yet
    s.write(sizes.map((size, i) => `GET /${200 + i}/${size} HTTP/1.1\r\nHost: a.test\r\n\r\n`).join(''));
    await new Promise((r) => setTimeout(r, 200));
    s.resume();
    for (const [i, size] of sizes.entries()) {
      expect(sha(await responses.next(i % 3 === 0)), `response ${i}`).toBe(sha(body(200 + i, size)));
    }
    s.destroy();
  });

  // Per-request routing drops a backend that speaks before it is asked (it cannot be framed).
  it.skipIf(routing === 'per-request')(
    'a backend that answers as soon as it is connected: its bytes wait for the splice, none lost',
    async () => {
      const s = await open(router.port());
      s.write('GET /0/300000 HTTP/1.1\r\nHost: early.test\r\n\r\n');
      expect(sha(await new Responses(s).next(true))).toBe(sha(body(0, 300_000)));
      s.destroy();
    },
  );
});
