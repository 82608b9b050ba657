/**
 * h2c with prior knowledge through the `net` panel (reference/peers-reliability.md §6): the
 * connection is routed by its first HEADERS (`:authority`, `:path`) and spliced, so the bytes a
 * backend receives equal the bytes the client sent minus one SETTINGS ACK: the router answers
 * the preface with its own empty SETTINGS while it peeks (clients such as grpc-js wait for them)
 * and cuts the client's ACK of them (docs/http2.md). Recording relays sit in front of
 * the router (what the client sent) and in front of each real h2c backend (what arrived there).
 * Refusals (bad preface, CONTINUATION flood) answer GOAWAY and reach no backend.
 */
import { spawn, spawnSync } from 'node:child_process';
import { connect as h2connect } from 'node:http2';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAG, FRAME, SERVER_PREFACE } from '../../src/peek/h2-frames.ts';
import { H2_PREFACE } from '../../src/peek/h2c.ts';
import { block, frame, goawayCode, headers, prelude } from '../fixtures/h2/build.ts';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type H2Backend, h2Request, startH2Backend } from './http2-helpers.ts';

/** A TCP relay to `port` that records, per connection, every byte it received from its client. */
interface Relay {
  readonly port: number;
  readonly received: Buffer[][];
  close(): Promise<void>;
}

async function startRelay(target: () => number): Promise<Relay> {
  const received: Buffer[][] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const chunks: Buffer[] = [];
    received.push(chunks);
    const upstream = connect({ port: target(), host: '127.0.0.1', allowHalfOpen: true });
    // One side closing ends the other once what was written to it has flushed: a client that
    // resets right after its last frame (curl) must not lose that frame on the way.
    for (const [s, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        other.destroySoon();
      });
    }
    client.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const joined = (r: Relay, i: number) => Buffer.concat(r.received[i] ?? []);

/** The SETTINGS ACK frame (RFC 9113 §6.5.3). */
const ACK = frame(FRAME.SETTINGS, FLAG.ACK, 0);

/**
 * `got` (what a backend received) is `sent` (what the client sent) with one SETTINGS ACK cut out,
 * after the preface and the client's first SETTINGS frame.
 */
function expectMinusOneAck(sent: Buffer, got: Buffer): void {
  expect(sent.length - got.length).toBe(ACK.length);
  const cuts: number[] = [];
  for (let at = sent.indexOf(ACK, H2_PREFACE.length + 9); at !== -1; at = sent.indexOf(ACK, at + 1)) {
    if (Buffer.concat([sent.subarray(0, at), sent.subarray(at + ACK.length)]).equals(got)) cuts.push(at);
  }
  expect(cuts.length).toBeGreaterThan(0);
}

/** Runs a command line client to its exit; resolves with its stdout. */
function run(command: string, args: string[]): Promise<string> {
  return new Promise<string>((resolve) => {
    const child = spawn(command, args);
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.on('close', () => resolve(text));
  });
}

describe('net panel: h2c prior knowledge routed by the first HEADERS, spliced unmodified', () => {
  let www: H2Backend;
  let api: H2Backend;
  let wwwTap: Relay;
  let apiTap: Relay;
  let front: Relay;
  let raw: TcpBackend;
  let router: TestRouter;

  beforeAll(async () => {
    www = await startH2Backend('www');
    api = await startH2Backend('api');
    wwwTap = await startRelay(() => www.port);
    apiTap = await startRelay(() => api.port);
    raw = await startTcpBackend('raw');
    router = await startTestRouter(
      // The splice (`allow`); `route`, the per-request default, is h2c-route.test.ts.
      {
        listeners: [{ name: 'web', address: '127.0.0.1:0', h2c: 'allow' }],
        addressBook: { name: 'file', path: 's.yaml' },
      },
      {
        dir: await tempDir({
          's.yaml': [
            `- { host: www.h2.test, backends: [127.0.0.1:${wwwTap.port}] }`,
            `- { host: www.h2.test, path: /api, backends: [127.0.0.1:${apiTap.port}] }`,
            `- { host: raw.h2.test, backends: [${raw.address}] }`,
          ].join('\n'),
        }),
      },
    );
    front = await startRelay(() => router.port());
  });
  afterAll(async () => {
    await router.close();
    await Promise.all([front.close(), wwwTap.close(), apiTap.close(), www.close(), api.close(), raw.close()]);
  });

  it.each([
    ['/index.html', 'www'],
    ['/api/v1/users', 'api'],
  ])("node's http2 client: %s goes to %s, the backend gets the client's bytes minus one ACK", async (path, want) => {
    const tap = want === 'www' ? wwwTap : apiTap;
    const frontIndex = front.received.length;
    const tapIndex = tap.received.length;
    const session = h2connect(`http://127.0.0.1:${front.port}`);
    try {
      // :authority decides the host (Host is never sent by node over HTTP/2).
      const r = await h2Request(session, { ':path': path, ':authority': 'WWW.H2.test', 'x-custom': 'hello' });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body.toString())).toMatchObject({ backend: want, path, authority: 'WWW.H2.test' });
    } finally {
      session.close();
    }
    await eventually(
      () => joined(tap, tapIndex).length > 0 && joined(front, frontIndex).length - joined(tap, tapIndex).length === 9,
    );
    expect(joined(tap, tapIndex).subarray(0, 24)).toEqual(H2_PREFACE);
    expectMinusOneAck(joined(front, frontIndex), joined(tap, tapIndex));
  });

  const hasCurl = spawnSync('curl', ['--version']).status === 0;
  it.skipIf(!hasCurl)('curl --http2-prior-knowledge is routed by :authority and :path, minus one ACK', async () => {
    const frontIndex = front.received.length;
    const tapIndex = apiTap.received.length;
    const out = await run('curl', [
      '-s',
      '--http2-prior-knowledge',
      '-H',
      'X-Custom: hello',
      '--connect-to',
      `www.h2.test:80:127.0.0.1:${front.port}`,
      'http://www.h2.test/api/curl?q=1',
    ]);
    expect(JSON.parse(out)).toMatchObject({ backend: 'api', path: '/api/curl?q=1', authority: 'www.h2.test' });
    await eventually(
      () =>
        joined(apiTap, tapIndex).length > 0 && joined(front, frontIndex).length - joined(apiTap, tapIndex).length === 9,
    );
    expectMinusOneAck(joined(front, frontIndex), joined(apiTap, tapIndex));
  });

  const hasNghttp = spawnSync('nghttp', ['--version']).status === 0;
  it.skipIf(!hasNghttp)('nghttp (prior knowledge) is routed by :authority and :path, minus one ACK', async () => {
    const frontIndex = front.received.length;
    const tapIndex = wwwTap.received.length;
    const out = await run('nghttp', [
      '-t',
      '20',
      '-H',
      ':authority: www.h2.test',
      `http://127.0.0.1:${front.port}/nghttp/1`,
    ]);
    expect(JSON.parse(out)).toMatchObject({ backend: 'www', path: '/nghttp/1', authority: 'www.h2.test' });
    await eventually(
      () =>
        joined(wwwTap, tapIndex).length > 0 && joined(front, frontIndex).length - joined(wwwTap, tapIndex).length === 9,
    );
    expectMinusOneAck(joined(front, frontIndex), joined(wwwTap, tapIndex));
  });

  it('HEADERS split across reads (one byte per write) is routed and forwarded byte for byte', async () => {
    const before = raw.received.length;
    const bytes = Buffer.concat([
      prelude(),
      frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.from([0, 0, 0x10, 0])),
      headers(
        block(
          [
            [':method', 'GET'],
            [':scheme', 'http'],
            [':path', '/split'],
            [':authority', 'raw.h2.test'],
            ['x-a', 'b'],
          ],
          true,
        ),
      ),
    ]);
    const socket = connect({ port: router.port(), host: '127.0.0.1' });
    socket.on('error', () => {});
    await new Promise<void>((r) => socket.once('connect', () => r()));
    for (let i = 0; i < bytes.length; i++) {
      socket.write(bytes.subarray(i, i + 1));
      await new Promise((r) => setImmediate(r));
    }
    await eventually(() => raw.received.length > before && Buffer.concat(raw.received[before]!).length >= bytes.length);
    socket.destroy();
    expect(Buffer.concat(raw.received[before]!)).toEqual(bytes);
  });

  /** A raw client socket to the router, collecting what it receives. */
  async function rawClient(): Promise<{ socket: Socket; received: () => Buffer }> {
    const socket = connect({ port: router.port(), host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    await new Promise<void>((r) => socket.once('connect', () => r()));
    return { socket, received: () => Buffer.concat(chunks) };
  }

  const request = (path: string, end = true) =>
    frame(
      FRAME.HEADERS,
      FLAG.END_HEADERS | (end ? FLAG.END_STREAM : 0),
      1,
      block([
        [':method', end ? 'GET' : 'POST'],
        [':scheme', 'http'],
        [':path', path],
        [':authority', 'raw.h2.test'],
      ]),
    );
  const received = (i: number) => Buffer.concat(raw.received[i] ?? []);

  it("a client that waits for the server's SETTINGS (as grpc-js does) gets the router's before any backend; its ACK is cut (RFC 9113 §3.4, §6.5.3)", async () => {
    const before = raw.received.length;
    const c = await rawClient();
    const opening = Buffer.concat([prelude(), frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.from([0, 0x0f, 0, 1]))]);
    c.socket.write(opening);
    // The router's SETTINGS and its ACK of the client's (issue 40 item 4), before any backend.
    await eventually(() => c.received().length >= SERVER_PREFACE.length + ACK.length);
    expect(c.received()).toEqual(Buffer.concat([SERVER_PREFACE, ACK]));
    expect(raw.received.length).toBe(before);
    // The ACK and the first HEADERS in one write, as grpc-js sends them.
    const rest = [request('/waits', false), frame(FRAME.DATA, FLAG.END_STREAM, 1, Buffer.from('hello'))];
    c.socket.write(Buffer.concat([ACK, ...rest]));
    const want = Buffer.concat([opening, ...rest]);
    await eventually(() => received(before).length >= want.length);
    c.socket.destroy();
    expect(received(before)).toEqual(want);
  });

  it('an ACK that arrives after the route, one byte per write, is cut once; later ACKs pass (RFC 9113 §6.5.3)', async () => {
    const before = raw.received.length;
    const c = await rawClient();
    const first = Buffer.concat([prelude(), request('/late', false)]);
    c.socket.write(first);
    await eventually(() => c.received().length >= SERVER_PREFACE.length && received(before).length >= first.length);
    const hello = frame(FRAME.DATA, 0, 1, Buffer.from('hello'));
    const again = frame(FRAME.DATA, FLAG.END_STREAM, 1, Buffer.from('again'));
    const tail = Buffer.concat([ACK, hello, ACK, again]);
    for (let i = 0; i < tail.length; i++) {
      c.socket.write(tail.subarray(i, i + 1));
      await new Promise((r) => setImmediate(r));
    }
    const want = Buffer.concat([first, hello, ACK, again]);
    await eventually(() => received(before).length >= want.length);
    c.socket.destroy();
    expect(received(before)).toEqual(want);
    expect(c.received()).toEqual(Buffer.concat([SERVER_PREFACE, ACK]));
  });

  /** Sends `bytes`, returns what came back until the router closed. */
  async function refused(bytes: Buffer): Promise<Buffer> {
    const socket = connect({ port: router.port(), host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.end(bytes);
    await closed;
    return Buffer.concat(chunks);
  }

  it.each([
    // RFC 9113 §3.4: bytes that start as the preface's request line but are not the preface
    // (no HTTP/1 request has version 2.0, so this is not answered as HTTP/1).
    ['bad preface (§3.4)', () => Buffer.from('PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n', 'latin1'), 0x1],
    // RFC 9113 §3.4: the preface must be followed by SETTINGS.
    [
      'preface followed by HEADERS instead of SETTINGS (§3.4)',
      () => Buffer.concat([H2_PREFACE, headers(block([[':path', '/']]))]),
      0x1,
    ],
    // RFC 9113 §6.5: SETTINGS length must be a multiple of 6.
    [
      'SETTINGS of 5 bytes (§6.5)',
      () => Buffer.concat([H2_PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(5))]),
      0x6,
    ],
    // RFC 9113 §10.5.1 / CVE-2024-27316: endless CONTINUATION frames without END_HEADERS.
    [
      'CONTINUATION flood (§10.5.1)',
      () =>
        Buffer.concat([
          prelude(),
          frame(FRAME.HEADERS, FLAG.END_STREAM, 1, block([[':method', 'GET']])),
          ...Array.from({ length: 200 }, () => frame(FRAME.CONTINUATION, 0, 1, Buffer.alloc(0))),
        ]),
      0xb,
    ],
  ])('%s: GOAWAY, nothing reaches a backend', async (_name, build, code) => {
    const hits = raw.hits + www.sessions + api.sessions;
    const reply = await refused(build());
    expect(goawayCode(reply)).toBe(code);
    expect(raw.hits + www.sessions + api.sessions).toBe(hits);
  });
});
