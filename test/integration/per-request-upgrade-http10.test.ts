/**
 * Upgrade on HTTP/1.0 (issue 40 item 8, RFC 9110 §7.8: "A server MUST ignore an Upgrade header
 * field that is received in an HTTP/1.0 request"). A backend that answers such a request with
 * 101 anyway is not followed into a tunnel: the 101 is a response nobody asked for, answered
 * 502 `bad_response`, and the request pipelined behind it (for another host) reaches no backend.
 * Heads are fed whole and one byte at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type NamedBackend, noLeaks, startNamedBackend } from './per-request-helpers.ts';

describe('per-request: Upgrade on an HTTP/1.0 request is ignored', () => {
  let upgrader: TcpBackend;
  let other: NamedBackend;
  let router: TestRouter;

  beforeAll(async () => {
    // Switches protocols on any request that names Upgrade, then echoes what follows.
    upgrader = await startTcpBackend('upgrader', (socket) => {
      let seen = '';
      let switched = false;
      socket.on('data', (d: Buffer) => {
        if (switched) return;
        seen += d.toString('latin1');
        if (!seen.includes('\r\n\r\n')) return;
        switched = true;
        socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n');
      });
    });
    other = await startNamedBackend('other');
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: up.test, backends: [${upgrader.address}] }`,
            `- { host: other.test, backends: [${other.address}] }`,
          ].join('\n'),
        }),
      },
    );
  });
  afterAll(async () => {
    await router.close();
    await upgrader.close();
    await other.close();
  });

  const request =
    'GET /chat HTTP/1.0\r\nHost: up.test\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n' +
    'GET /next HTTP/1.1\r\nHost: other.test\r\n\r\n';

  it.each([
    ['whole', undefined],
    ['one byte at a time', 1],
  ] as const)(
    'fed %s: the 101 is answered 502 bad_response, no tunnel, the next request goes nowhere',
    async (_how, chunkSize) => {
      const hits = upgrader.hits;
      const res = await rawRequest(router.port(), request, chunkSize === undefined ? {} : { chunkSize });
      expect(statusOf(res)).toBe(502);
      expect(headerOf(res, 'X-Switchboard-Error')).toBe('bad_response');
      expect(res.toString('latin1')).not.toContain('101 Switching');
      // The upgrader saw only the first request; the second reached no backend through it.
      expect(upgrader.hits).toBe(hits + 1);
      const got = upgrader.received
        .at(-1)!
        .map((b) => b.toString('latin1'))
        .join('');
      expect(got).not.toContain('/next');
      expect(other.seen).toEqual([]);
      await noLeaks(router);
    },
  );

  it('an HTTP/1.1 request that offers the protocol still switches (the 101 is forwarded)', async () => {
    const res = await rawRequest(
      router.port(),
      'GET /chat HTTP/1.1\r\nHost: up.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
      { end: true, timeoutMs: 2_000 },
    );
    expect(statusOf(res)).toBe(101);
  });
});
