/**
 * Strict framing in per-request mode (reference/peers-reliability.md §3, hazard rows 1–13): each
 * vector is answered 400 and closed before any byte of it reaches a backend, whether it is the
 * first request of a connection or a later one. The backend records every byte it receives.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { collectRequests, noLeaks, splitResponses } from './per-request-helpers.ts';

const H = 'Host: ok.test\r\n';
const POST = `POST / HTTP/1.1\r\n${H}`;
const CHUNKED = `${POST}Transfer-Encoding: chunked\r\n\r\n`;

// [vector, bytes of one request (head and the body in hand), hazard row + spec]
const vectors: [string, string, string][] = [
  ['CL.TE', `${POST}Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG`, '#1 RFC 9112 §6.3 r3'],
  [
    'TE.CL',
    `${POST}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n`,
    '#2 RFC 9112 §6.3 r3',
  ],
  ['TE final coding gzip', `${POST}Transfer-Encoding: gzip\r\n\r\n`, '#3 RFC 9112 §6.3 r4'],
  ['TE chunked, identity', `${POST}Transfer-Encoding: chunked, identity\r\n\r\n`, '#3 RFC 9112 §6.1'],
  ['TE chunked twice', `${POST}Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n`, '#3 RFC 9112 §6.1'],
  ['TE xchunked', `${POST}Transfer-Encoding: xchunked\r\n\r\n`, '#3 RFC 9112 §6.3 r4'],
  ['two TE lines', `${POST}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, '#3'],
  ['TE with \\x0b before the value', `${POST}Transfer-Encoding:\x0bchunked\r\n\r\n0\r\n\r\n`, '#3/#7 RFC 9110 §5.5'],
  ['TE space before colon', `${POST}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n`, '#3/#7 RFC 9112 §5.1'],
  ['TE on HTTP/1.0', `POST / HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, '#3 RFC 9112 §6.1'],
  ['CL twice, different', `${POST}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello`, '#4 RFC 9112 §6.3 r5'],
  ['CL list', `${POST}Content-Length: 5, 6\r\n\r\nhello`, '#4 RFC 9110 §8.6'],
  ['CL sign', `${POST}Content-Length: +5\r\n\r\nhello`, '#4 RFC 9110 §8.6'],
  ['CL hex', `${POST}Content-Length: 0x5\r\n\r\nhello`, '#4 RFC 9110 §8.6'],
  ['CL negative', `${POST}Content-Length: -1\r\n\r\n`, '#4 RFC 9110 §8.6'],
  ['CL underscore', `${POST}Content-Length: 1_0\r\n\r\n`, '#4 RFC 9110 §8.6'],
  ['CL past 2^53', `${POST}Content-Length: ${'9'.repeat(25)}\r\n\r\n`, '#4 RFC 9110 §8.6'],
  ['obs-fold', `GET / HTTP/1.1\r\n${H}X-A: 1\r\n folded\r\n\r\n`, '#5 RFC 9112 §5.2'],
  ['bare LF', 'GET / HTTP/1.1\nHost: ok.test\n\n', '#6 RFC 9112 §2.2'],
  ['bare CR in a value', `GET / HTTP/1.1\r\n${H}X-A: a\rb\r\n\r\n`, '#6 RFC 9112 §2.2'],
  ['whitespace before colon', 'GET / HTTP/1.1\r\nHost : ok.test\r\n\r\n', '#7 RFC 9112 §5.1'],
  ['invalid name byte', `GET / HTTP/1.1\r\n${H}X-\x80A: 1\r\n\r\n`, '#7 RFC 9110 §5.1'],
  ['empty name', `GET / HTTP/1.1\r\n${H}: x\r\n\r\n`, '#7 RFC 9110 §5.1'],
  ['NUL in a value', `GET / HTTP/1.1\r\n${H}X-A: a\x00b\r\n\r\n`, '#7 RFC 9110 §5.5'],
  ['absolute-form ≠ Host', `GET http://internal.test/ HTTP/1.1\r\n${H}\r\n`, '#8 RFC 9112 §3.2.2'],
  ['two Host lines', `GET / HTTP/1.1\r\n${H}Host: other.test\r\n\r\n`, '#9 RFC 9112 §3.2'],
  ['Host with a space', 'GET / HTTP/1.1\r\nHost: ok.test other\r\n\r\n', '#9 RFC 9110 §7.2'],
  ['no Host on HTTP/1.1', 'GET / HTTP/1.1\r\nAccept: */*\r\n\r\n', '#9 RFC 9112 §3.2'],
  ['two spaces in the request line', `GET  / HTTP/1.1\r\n${H}\r\n`, '#11 RFC 9112 §3'],
  ['lower-case version', `GET / http/1.1\r\n${H}\r\n`, '#11 RFC 9112 §2.3'],
  ['version 1.32', `GET / HTTP/1.32\r\n${H}\r\n`, '#11 RFC 9112 §2.3'],
  ['asterisk-form with GET', `GET * HTTP/1.1\r\n${H}\r\n`, '#8 RFC 9112 §3.2.4'],
  ['whitespace-led first header', `GET / HTTP/1.1\r\n ${H}\r\n`, '#13 RFC 9112 §2.2'],
  ['chunk size 0x10', `${CHUNKED}0x10\r\n${'a'.repeat(16)}\r\n0\r\n\r\n`, '#12 RFC 9112 §7.1'],
  ['chunk size 1_0', `${CHUNKED}1_0\r\n${'a'.repeat(16)}\r\n0\r\n\r\n`, '#12 RFC 9112 §7.1'],
  ['chunk size +5', `${CHUNKED}+5\r\nhello\r\n0\r\n\r\n`, '#12 RFC 9112 §7.1'],
  ['chunk size of 40 hex digits', `${CHUNKED}${'f'.repeat(40)}\r\nhello\r\n`, '#12 RFC 9112 §7.1'],
  ['CR in a chunk extension', `${CHUNKED}2\r\r;a\r\nab\r\n0\r\n\r\n`, '#12 RFC 9112 §7.1.1'],
  ['chunk data not followed by CRLF', `${CHUNKED}2\r\nabc\r\n0\r\n\r\n`, '#12 RFC 9112 §7.1'],
  ['bare LF after a chunk size', `${CHUNKED}2\nab\r\n0\r\n\r\n`, '#6/#12 RFC 9112 §7.1'],
  ['Content-Length in the trailer', `${CHUNKED}2\r\nab\r\n0\r\nContent-Length: 5\r\n\r\n`, '#12 RFC 9110 §6.5.1'],
  [
    // Without a body the first request switches (h2c: route, the per-request default): h2c-upgrade.test.ts.
    'Upgrade: h2c with a body',
    `POST / HTTP/1.1\r\n${H}Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\nContent-Length: 2\r\n\r\nhi`,
    'RFC 9113 §3.1 (issue 17 item 5; issue 40 item 7)',
  ],
];

describe('per-request: the hazard table, nothing reaches the backend', () => {
  let sink: TcpBackend;
  let router: TestRouter;
  const requests = collectRequests();
  const OK_REQUEST = `GET /first HTTP/1.1\r\n${H}\r\n`;

  beforeAll(async () => {
    // Answers every request head with a small keep-alive 200.
    sink = await startTcpBackend('sink', (socket) => {
      let seen = '';
      socket.on('data', (d) => {
        seen += d.toString('latin1');
        while (seen.includes('\r\n\r\n')) {
          seen = seen.slice(seen.indexOf('\r\n\r\n') + 4);
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        }
      });
    });
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: ok.test, backends: [${sink.address}] }\n` }) },
    );
  });
  afterEach(async () => {
    await noLeaks(router);
  });
  afterAll(async () => {
    requests.stop();
    await router.close();
    await sink.close();
  });

  it.each(vectors)('first request: %s → 400 (%s)', async (_name, bytes) => {
    const before = sink.all().length;
    const res = await rawRequest(router.port(), bytes);
    expect(statusOf(res)).toBe(400);
    expect(headerOf(res, 'X-Switchboard-Error')).toBe('bad_request');
    expect(headerOf(res, 'Connection')).toBe('close');
    expect(sink.all().length).toBe(before);
  });

  it.each(vectors)('second request on a keep-alive connection: %s → 200 then 400 (%s)', async (_name, bytes) => {
    const before = sink.all().length;
    const res = await rawRequest(router.port(), OK_REQUEST + bytes);
    const [first, second] = splitResponses(res, ['GET', 'GET']);
    expect(first?.status).toBe(200);
    expect(second?.status).toBe(400);
    expect(second?.head).toContain('X-Switchboard-Error: bad_request');
    // The backend got the first request, byte for byte, and nothing of the second.
    expect(sink.all().subarray(before).toString('latin1')).toBe(OK_REQUEST);
  });

  it('the router answers 404 for a later request only after the earlier response, then closes', async () => {
    const res = await rawRequest(
      router.port(),
      `${OK_REQUEST}GET / HTTP/1.1\r\nHost: nowhere.test\r\n\r\nGET /never HTTP/1.1\r\n${H}\r\n`,
    );
    const [first, second, third] = splitResponses(res, ['GET', 'GET', 'GET']);
    expect(first?.status).toBe(200);
    expect(second?.status).toBe(404);
    expect(second?.head).toContain('X-Switchboard-Error: no_route');
    expect(third).toBeUndefined();
    expect(requests.records.some((r) => r.result === 'no_route' && r.host === 'nowhere.test' && r.status === 404)).toBe(
      true,
    );
  });

  it('CONNECT on a listener without allowConnect → 405 method_not_allowed', async () => {
    const before = sink.all().length;
    const res = await rawRequest(router.port(), 'CONNECT ok.test:443 HTTP/1.1\r\nHost: ok.test:443\r\n\r\n');
    expect(statusOf(res)).toBe(405);
    expect(headerOf(res, 'X-Switchboard-Error')).toBe('method_not_allowed');
    expect(sink.all().length).toBe(before);
  });
});
