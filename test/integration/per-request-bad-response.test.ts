/**
 * Responses the router cannot frame in per-request mode (issue 17 item 11): while nothing of the
 * response has reached the client it answers 502 `bad_response` (X-Switchboard-Error) and
 * closes; once part of it went out it cuts the connection, so the truncation shows. Either way
 * the upstream connection is destroyed and the request pipelined behind reaches no backend.
 *
 * The bad backend answers `GET /row/N` with row N's bytes in one write.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { collectRequests, type NamedBackend, noLeaks, startNamedBackend } from './per-request-helpers.ts';

// [case, the backend's whole answer (one write), spec]
const unframeable: [string, string, string][] = [
  [
    'Content-Length and Transfer-Encoding',
    'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'RFC 9112 §6.3 r3',
  ],
  [
    'two Content-Length values',
    'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello',
    'RFC 9112 §6.3 r5',
  ],
  ['bare LF line ends', 'HTTP/1.1 200 OK\nContent-Length: 2\n\nok', 'RFC 9112 §2.2'],
  ['Transfer-Encoding on HTTP/1.0', 'HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 'RFC 9112 §6.1'],
  [
    'a bad chunk size',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n',
    'RFC 9112 §7.1',
  ],
  ['a status line that is not HTTP/1.x', 'HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n', 'RFC 9112 §4'],
  [
    'a 101 to a plain GET',
    'HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n',
    'RFC 9110 §7.8',
  ],
];

describe('per-request: unframeable responses', () => {
  let bad: TcpBackend;
  let good: NamedBackend;
  let router: TestRouter;
  /** The bad backend's socket for the `/partial` case, once connected. */
  let partial: Socket | undefined;
  const requests = collectRequests();

  beforeAll(async () => {
    bad = await startTcpBackend('bad', (socket) => {
      let seen = '';
      socket.on('data', (d: Buffer) => {
        seen += d.toString('latin1');
        if (!seen.includes('\r\n\r\n')) return;
        const path = /^GET (\S+)/.exec(seen)?.[1] ?? '';
        if (path === '/partial') {
          partial = socket;
          socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
          return;
        }
        const row = unframeable[Number(path.slice('/row/'.length))];
        if (row !== undefined) socket.write(row[1]);
      });
    });
    good = await startNamedBackend('good');
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: bad.test, backends: [${bad.address}] }`,
            `- { host: good.test, backends: [${good.address}] }`,
          ].join('\n'),
        }),
      },
    );
  });
  afterAll(async () => {
    requests.stop();
    await router.close();
    await bad.close();
    await good.close();
  });

  it.each(unframeable.map(([name, , spec], i) => [name, spec, i] as const))(
    '%s (%s): 502 bad_response while nothing went out, then closed; the next request reaches no backend',
    async (name, _spec, i) => {
      const res = await rawRequest(
        router.port(),
        `GET /row/${i} HTTP/1.1\r\nHost: bad.test\r\n\r\nGET /next HTTP/1.1\r\nHost: good.test\r\n\r\n`,
      );
      expect(statusOf(res)).toBe(502);
      expect(headerOf(res, 'X-Switchboard-Error')).toBe('bad_response');
      expect(headerOf(res, 'Connection')).toBe('close');
      // The router's answer and nothing else: no byte of the backend's response, no second response.
      expect(res.toString('latin1')).toMatch(/\r\n\r\nbad_response\n$/);
      expect(res.toString('latin1').match(/HTTP\/1\.[01] /g)).toHaveLength(1);
      expect(good.seen).toEqual([]);
      await eventually(() => requests.records.some((r) => r.path === `/row/${i}`));
      expect(
        requests.records.find((r) => r.path === `/row/${i}`),
        name,
      ).toMatchObject({
        result: 'bad_response',
        status: 502,
        backend: bad.address,
        reason: expect.stringMatching(/^http1 (response|chunked): /),
      });
      await noLeaks(router);
    },
  );

  it('part of the response already went out: the client is cut, nothing is appended', async () => {
    const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n';
    const socket = connect({ port: router.port(), host: '127.0.0.1' });
    socket.on('error', () => {});
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write('GET /partial HTTP/1.1\r\nHost: bad.test\r\n\r\n');
    await eventually(() => got === head);
    partial!.write('zz\r\n');
    await closed;
    expect(got).toBe(head);
    await eventually(() => requests.records.some((r) => r.path === '/partial'));
    expect(requests.records.find((r) => r.path === '/partial')).toMatchObject({ result: 'bad_response', status: 200 });
    await noLeaks(router);
  });
});
