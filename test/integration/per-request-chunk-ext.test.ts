/**
 * Chunk extensions through per-request routing (issue 17 item 6, RFC 9112 §7.1.1): a request
 * whose chunked body has a malformed extension is answered 400 bad_request and closed, and the
 * recording backend receives nothing of it, first request or later on a keep-alive connection;
 * well-formed extensions reach it byte for byte. In the other direction, a response with a
 * malformed extension never reaches the client as such.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { type RecordingBackend, startRecordingBackend } from '../harness/nothing-lost.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { noLeaks, splitResponses } from './per-request-helpers.ts';

const CHUNKED = (host: string) => `POST / HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n`;
const OK_REQUEST = 'GET /first HTTP/1.1\r\nHost: ok.test\r\n\r\n';

// [vector, chunked body, source]
const bad: [string, string, string][] = [
  ['2;', '2;\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1 chunk-ext-name = token'],
  ['unclosed quote 2;a="b', '2;a="b\r\nab\r\n0\r\n\r\n', 'RFC 9110 §5.6.4 quoted-string'],
  ['2;a=b c', '2;a=b c\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1'],
  ['2;a=\\xff', '2;a=\xff\r\nab\r\n0\r\n\r\n', 'RFC 9110 §5.6.2 tchar (obs-text only in quotes)'],
  ['0;', '0;\r\n\r\n', 'RFC 9112 §7.1.1 (last chunk)'],
  ['2;=b', '2;=b\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1'],
  ['2;a=', '2;a=\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1 chunk-ext-val'],
  ['trailing whitespace', '2;a=b \r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1 BWS ";"'],
  ['CTL in quotes', '2;a="\x01"\r\nab\r\n0\r\n\r\n', 'RFC 9110 §5.6.4 qdtext'],
  [
    'quoted CRLF hiding a request',
    '2;a="\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: ok.test\r\n\r\n"\r\nab\r\n0\r\n\r\n',
    'RFC 9110 §5.6.4',
  ],
  ['second chunk', '2\r\nab\r\n1;a;\r\nc\r\n0\r\n\r\n', 'RFC 9112 §7.1.1'],
];

// [vector, chunked body, source]
const good: [string, string, string][] = [
  ['token extensions', '2;a=b;c\r\nab\r\n0;z=1\r\n\r\n', 'RFC 9112 §7.1.1'],
  ['quoted with obs-text and quoted-pair', '2;a="\xe9 \\"x\\";y"\r\nab\r\n0\r\n\r\n', 'RFC 9110 §5.6.4'],
  ['BWS around =', '2; a = b ;c\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1 BWS'],
];

describe('per-request: chunk extensions (RFC 9112 §7.1.1)', () => {
  let backend: RecordingBackend;
  let router: TestRouter;
  const received = () => Buffer.concat(backend.conns.map((c) => c.receivedBytes()));

  beforeAll(async () => {
    // Answers every request with a small keep-alive 200 once its body has ended (the last chunk
    // and an empty trailer for POST here, the blank line for GET).
    backend = await startRecordingBackend((conn) => {
      let seen = '';
      conn.socket.on('data', (d: Buffer) => {
        seen += d.toString('latin1');
        for (;;) {
          const head = seen.indexOf('\r\n\r\n');
          if (head < 0) break;
          let end = head + 4;
          if (seen.startsWith('POST')) {
            const last = /(?:^|\r\n)0(?:;[^\r]*)?\r\n\r\n/.exec(seen.slice(end));
            if (last === null) break;
            end += last.index + last[0].length;
          }
          seen = seen.slice(end);
          conn.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        }
      });
    });
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({ 'servers.yaml': `- { host: ok.test, backends: [${backend.address}] }\n` }),
      },
    );
  });
  afterEach(async () => {
    await noLeaks(router);
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it.each(bad)('first request: %s → 400, the backend receives nothing (%s)', async (_name, body) => {
    const before = received().length;
    const res = await rawRequest(router.port(), CHUNKED('ok.test') + body);
    expect(statusOf(res)).toBe(400);
    expect(headerOf(res, 'X-Switchboard-Error')).toBe('bad_request');
    expect(headerOf(res, 'Connection')).toBe('close');
    expect(received().length).toBe(before);
  });

  it.each(bad)('after a good request on the same connection: %s → 200 then 400 (%s)', async (_name, body) => {
    const before = received().length;
    const res = await rawRequest(router.port(), OK_REQUEST + CHUNKED('ok.test') + body);
    const [first, second] = splitResponses(res, ['GET', 'POST']);
    expect(first?.status).toBe(200);
    expect(second?.status).toBe(400);
    expect(second?.head).toContain('X-Switchboard-Error: bad_request');
    expect(received().subarray(before).toString('latin1')).toBe(OK_REQUEST);
  });

  it.each(good)('well-formed: %s reaches the backend byte for byte (%s)', async (_name, body) => {
    const before = received().length;
    const bytes = CHUNKED('ok.test') + body;
    const res = await rawRequest(
      router.port(),
      `${bytes}GET /last HTTP/1.1\r\nHost: ok.test\r\nConnection: close\r\n\r\n`,
    );
    const [first, second] = splitResponses(res, ['POST', 'GET']);
    expect(first?.status).toBe(200);
    expect(second?.status).toBe(200);
    expect(received().subarray(before).toString('latin1')).toBe(
      `${bytes}GET /last HTTP/1.1\r\nHost: ok.test\r\nConnection: close\r\n\r\n`,
    );
  });
});

describe('per-request: a response with a malformed chunk extension', () => {
  let backend: RecordingBackend;
  let router: TestRouter;

  beforeAll(async () => {
    backend = await startRecordingBackend((conn) => {
      conn.socket.once('data', () => {
        conn.socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;a="b\r\nok\r\n0\r\n\r\n');
      });
    });
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({ 'servers.yaml': `- { host: ok.test, backends: [${backend.address}] }\n` }),
      },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it('is not relayed as a framed 200, and the connection closes', async () => {
    const res = await rawRequest(router.port(), `${OK_REQUEST}GET /second HTTP/1.1\r\nHost: ok.test\r\n\r\n`);
    const text = res.toString('latin1');
    expect(text).not.toContain('2;a="b');
    expect(statusOf(res)).not.toBe(200);
    // rawRequest resolved: the router closed the client connection; the second request never
    // reached a backend.
    expect(backend.conns.map((c) => c.receivedBytes().toString('latin1')).join('')).not.toContain('/second');
    await noLeaks(router);
  });
});
