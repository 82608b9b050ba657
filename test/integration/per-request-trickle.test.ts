/**
 * Trickled heads after the first (issue 17 item 9): in per-request routing, a later request's
 * head sent one byte per write is collected with each byte copied once — no re-concatenation
 * of everything pending on every read — and routed like any other.
 *
 * The router runs in this process, so `Buffer.concat` is counted while only the trickle is in
 * flight, and the router's side of the connection (from the `switchboard:connection:accept` channel) is
 * watched so that each byte is written only once the router has read the last: re-concatenating
 * would call `Buffer.concat` once per read (thousands of times); the growing buffer never.
 * Timing decides nothing.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const PAD = 4 * 1024;

/** Reads from `socket` until `count` complete responses (Content-Length framed) arrived. */
function responses(socket: Socket, count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (c: Buffer) => {
      text += c.toString('latin1');
      const out: string[] = [];
      let rest = text;
      for (;;) {
        const end = rest.indexOf('\r\n\r\n');
        if (end < 0) break;
        const length = Number(/content-length: (\d+)/i.exec(rest.slice(0, end))?.[1] ?? 0);
        if (rest.length < end + 4 + length) break;
        out.push(rest.slice(0, end + 4 + length));
        rest = rest.slice(end + 4 + length);
      }
      if (out.length >= count) {
        socket.removeListener('data', onData);
        resolve(out);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

describe('per-request: a later head trickled one byte per write', () => {
  let backend: TestBackend;
  let router: TestRouter;
  beforeAll(async () => {
    backend = await startHttpBackend('b', (req, res) => {
      res.setHeader('content-length', '2');
      res.end(req.headers['x-pad'] === undefined ? 'no' : 'ok');
    });
    router = await startTestRouter(
      { routing: 'per-request', addressBook: { name: 'file', path: 'servers.yaml' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` }) },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it('is framed with each byte copied once and routed like the first', async () => {
    let server: Socket | undefined;
    const onAccept = (m: unknown) => {
      server = (m as { socket: Socket }).socket;
    };
    subscribe('switchboard:connection:accept', onAccept);
    const socket = connect({ port: router.port(), host: '127.0.0.1', noDelay: true });
    await new Promise<void>((r) => socket.once('connect', () => r()));
    while (server === undefined) await new Promise((r) => setImmediate(r));
    unsubscribe('switchboard:connection:accept', onAccept);
    const routerSide = server;
    try {
      const first = responses(socket, 1);
      socket.write('GET /first HTTP/1.1\r\nHost: t.test\r\n\r\n');
      expect((await first)[0]).toMatch(/^HTTP\/1\.1 200/);

      const second = Buffer.from(`GET /second HTTP/1.1\r\nHost: t.test\r\nX-Pad: ${'p'.repeat(PAD)}\r\n\r\n`);
      const answered = responses(socket, 1);
      const concat = vi.spyOn(Buffer, 'concat');
      try {
        for (let i = 0; i < second.length; i++) {
          const before = routerSide.bytesRead;
          socket.write(second.subarray(i, i + 1));
          while (routerSide.bytesRead === before) await new Promise((r) => setImmediate(r));
        }
        const [res] = await answered;
        expect(res).toMatch(/^HTTP\/1\.1 200/);
        expect(res!.endsWith('ok')).toBe(true);
        expect(concat.mock.calls.length).toBeLessThan(16);
      } finally {
        concat.mockRestore();
      }
    } finally {
      socket.destroy();
    }
  });
});
