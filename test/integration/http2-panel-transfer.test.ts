/**
 * Bodies through the http2 panel are streamed with flow control: a 50 MiB upload to a slow
 * backend arrives intact while the data in flight (sent by the client, not yet read by the
 * backend) stays bounded, so the router never holds the body. Both upstream protocols.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { type ClientHttp2Session, connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type H2Backend, startH2Backend } from './http2-helpers.ts';

const TOTAL = 50 * 1024 * 1024;
const CHUNK = 64 * 1024;
/** Loopback socket buffers, two HTTP/2 windows and stream buffers: far below the 50 MiB body. */
const IN_FLIGHT_BOUND = 16 * 1024 * 1024;

interface Progress {
  sent: number;
  received: number;
  maxInFlight: number;
}

/** Reads `body` slowly (a pause every 256 KiB), hashing it and tracking the in-flight maximum. */
function slowRead(body: Readable, progress: Progress, done: (sha: string) => void): void {
  const hash = createHash('sha256');
  let sincePause = 0;
  body.on('data', (c: Buffer) => {
    hash.update(c);
    progress.received += c.length;
    progress.maxInFlight = Math.max(progress.maxInFlight, progress.sent - progress.received);
    sincePause += c.length;
    if (sincePause >= 256 * 1024) {
      sincePause = 0;
      body.pause();
      setTimeout(() => body.resume(), 2);
    }
  });
  body.on('end', () => done(hash.digest('hex')));
}

describe('http2 panel: streamed 50 MiB upload to a slow backend', () => {
  const progress: Progress = { sent: 0, received: 0, maxInFlight: 0 };
  let h2: H2Backend;
  let h1: Server;
  let router: TestRouter;
  let session: ClientHttp2Session;

  beforeAll(async () => {
    h2 = await startH2Backend('h2', (stream) =>
      slowRead(stream, progress, (sha) => {
        stream.respond({ ':status': 200 });
        stream.end(sha);
      }),
    );
    h1 = createHttpServer((req, res) => slowRead(req, progress, (sha) => res.end(sha)));
    await new Promise<void>((r) => h1.listen(0, '127.0.0.1', () => r()));
    const h1Port = (h1.address() as AddressInfo).port;
    router = await startTestRouter(
      { panel: 'http2', addressBook: { name: 'file', path: 's.yaml' } },
      {
        dir: await tempDir({
          's.yaml': [
            `- { host: "*", path: /h2, backends: [${h2.address}], protocol: h2c }`,
            `- { host: "*", path: /h1, backends: [127.0.0.1:${h1Port}] }`,
          ].join('\n'),
        }),
      },
    );
    session = connect(`http://127.0.0.1:${router.port()}`);
  });
  afterAll(async () => {
    session.close();
    await router.close();
    await h2.close();
    h1.closeAllConnections();
    await new Promise<void>((r) => h1.close(() => r()));
  });

  it.each(['/h2', '/h1'])(
    '%s: arrives intact with bounded data in flight',
    async (path) => {
      progress.sent = 0;
      progress.received = 0;
      progress.maxInFlight = 0;
      const block = randomBytes(CHUNK);
      const want = createHash('sha256');
      const stream = session.request({ ':path': path, ':method': 'POST' });
      const reply = new Promise<string>((resolve, reject) => {
        let text = '';
        stream.on('data', (c) => (text += c));
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
      });
      for (let i = 0; i < TOTAL / CHUNK; i++) {
        block.writeUInt32BE(i, 0); // every chunk differs, so reordering would change the hash
        want.update(block);
        const ok = stream.write(Buffer.from(block), () => {
          progress.sent += CHUNK;
        });
        if (!ok) await new Promise((r) => stream.once('drain', r));
      }
      stream.end();
      expect(await reply).toBe(want.digest('hex'));
      expect(progress.received).toBe(TOTAL);
      expect(progress.maxInFlight).toBeLessThan(IN_FLIGHT_BOUND);
      expect(progress.maxInFlight).toBeGreaterThan(0);
    },
    120_000,
  );
});
