/** Response heads and their framing (RFC 9112 §4, §6.3), fed whole and split. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import type { BodyFraming } from '../../src/peek/http1-fields.ts';
import { Http1ResponseScanner, peekHttp1Response } from '../../src/peek/http1-response.ts';

const b = (s: string) => Buffer.from(s, 'latin1');
const MAX = 16384;

/** The request a response answers: its method, or its method and the protocols its Upgrade offered. */
type Asked = string | readonly [string, readonly string[]];

/** Result of a response peek fed `step` bytes at a time: the framing, 'more', or an error code. */
function framingOf(head: string, asked: Asked, step: number): BodyFraming | string {
  const [method, upgradeTo] = typeof asked === 'string' ? [asked, []] : asked;
  const bytes = b(head);
  const scanner = new Http1ResponseScanner(MAX);
  try {
    for (let n = Math.min(step, bytes.length); ; n = Math.min(n + step, bytes.length)) {
      const r = scanner.feed(bytes.subarray(0, n), method, upgradeTo);
      if (r !== undefined) {
        expect(r.headLength).toBe(bytes.length);
        return r.bodyFraming;
      }
      if (n === bytes.length) return 'more';
    }
  } catch (e) {
    if (isSwitchboardError(e)) return e.code;
    throw e;
  }
}

// [name, response head, request method (and offered upgrades), expected framing or error code, source]
const rows: [string, string, Asked, BodyFraming | string, string][] = [
  [
    'content-length',
    'HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n',
    'GET',
    { kind: 'length', length: 12 },
    'RFC 9112 §6.3 r6',
  ],
  ['chunked', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', 'GET', { kind: 'chunked' }, 'RFC 9112 §6.3 r4'],
  [
    'gzip, chunked',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n',
    'POST',
    { kind: 'chunked' },
    'RFC 9112 §6.3 r4',
  ],
  [
    'TE not ending in chunked → close',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n',
    'GET',
    { kind: 'close' },
    'RFC 9112 §6.3 r4',
  ],
  ['no length → close', 'HTTP/1.1 200 OK\r\nX: y\r\n\r\n', 'GET', { kind: 'close' }, 'RFC 9112 §6.3 r8'],
  ['HTTP/1.0 no length → close', 'HTTP/1.0 200 OK\r\n\r\n', 'GET', { kind: 'close' }, 'RFC 9112 §6.3 r8'],
  [
    'HEAD response has no body',
    'HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n',
    'HEAD',
    { kind: 'none' },
    'RFC 9112 §6.3 r1',
  ],
  [
    'HEAD response, chunked header',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n',
    'HEAD',
    { kind: 'none' },
    'RFC 9112 §6.3 r1',
  ],
  ['204 has no body', 'HTTP/1.1 204 No Content\r\n\r\n', 'DELETE', { kind: 'none' }, 'RFC 9112 §6.3 r1'],
  [
    '304 has no body',
    'HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n',
    'GET',
    { kind: 'none' },
    'RFC 9112 §6.3 r1',
  ],
  ['100 Continue has no body', 'HTTP/1.1 100 Continue\r\n\r\n', 'POST', { kind: 'none' }, 'RFC 9112 §6.3 r1'],
  [
    '103 Early Hints has no body',
    'HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n',
    'GET',
    { kind: 'none' },
    'RFC 9112 §6.3 r1',
  ],
  [
    '101 → tunnel',
    'HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n',
    ['GET', ['websocket']],
    { kind: 'tunnel' },
    'RFC 9112 §6.3 r2',
  ],
  [
    '101 naming an offered protocol with a version, any case → tunnel',
    'HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: WebSocket/13\r\n\r\n',
    ['GET', ['foo', 'websocket']],
    { kind: 'tunnel' },
    'RFC 9110 §7.8',
  ],
  [
    '101 to a request that did not ask to upgrade',
    'HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n',
    'GET',
    'SWB_ERR_BAD_REQUEST',
    'RFC 9110 §7.8 (issue 17 item 5)',
  ],
  [
    '101 switching to a protocol the request did not offer',
    'HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n',
    ['GET', ['websocket']],
    'SWB_ERR_BAD_REQUEST',
    'RFC 9110 §7.8',
  ],
  [
    '101 without an Upgrade header',
    'HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n\r\n',
    ['GET', ['websocket']],
    'SWB_ERR_BAD_REQUEST',
    'RFC 9110 §15.2.2',
  ],
  [
    '2xx to GET is not a tunnel',
    'HTTP/1.1 200 Connection Established\r\n\r\n',
    'GET',
    { kind: 'close' },
    'RFC 9112 §6.3 r2, r8',
  ],
  [
    'CONNECT 200 → tunnel',
    'HTTP/1.1 200 Connection Established\r\n\r\n',
    'CONNECT',
    { kind: 'tunnel' },
    'RFC 9112 §6.3 r2',
  ],
  [
    'CONNECT 407 has a body',
    'HTTP/1.1 407 Auth\r\nContent-Length: 3\r\n\r\n',
    'CONNECT',
    { kind: 'length', length: 3 },
    'RFC 9112 §6.3 r2',
  ],
  ['Content-Length 0', 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', 'GET', { kind: 'none' }, 'RFC 9112 §6.3 r6'],
  [
    'no reason, no space',
    'HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n',
    'GET',
    { kind: 'length', length: 1 },
    'RFC 9112 §4 (lenient, as llhttp)',
  ],
  ['empty reason', 'HTTP/1.1 200 \r\nContent-Length: 1\r\n\r\n', 'GET', { kind: 'length', length: 1 }, 'RFC 9112 §4'],
  [
    'one leading CRLF',
    '\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n',
    'GET',
    { kind: 'length', length: 1 },
    'RFC 9112 §2.2',
  ],
  [
    'TE + CL',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n',
    'GET',
    'SWB_ERR_BAD_REQUEST',
    '#1 RFC 9112 §6.3 r3',
  ],
  [
    'TE on HTTP/1.0',
    'HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n',
    'GET',
    'SWB_ERR_BAD_REQUEST',
    '#3 RFC 9112 §6.1',
  ],
  [
    'chunked twice',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n',
    'GET',
    'SWB_ERR_BAD_REQUEST',
    '#3 RFC 9112 §6.1',
  ],
  ['CL list', 'HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n', 'GET', 'SWB_ERR_BAD_REQUEST', '#4 RFC 9110 §8.6'],
  ['CL sign on HEAD response', 'HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n', 'HEAD', 'SWB_ERR_BAD_REQUEST', '#4'],
  [
    'obs-fold',
    'HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n',
    'GET',
    'SWB_ERR_BAD_REQUEST',
    '#5 RFC 9112 §5.2',
  ],
  ['bare LF', 'HTTP/1.1 200 OK\nContent-Length: 0\n\n', 'GET', 'SWB_ERR_BAD_REQUEST', '#6 RFC 9112 §2.2'],
  [
    'space before colon',
    'HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n',
    'GET',
    'SWB_ERR_BAD_REQUEST',
    '#7 RFC 9112 §5.1',
  ],
  ['HTTP/2.0 status line', 'HTTP/2.0 200 OK\r\n\r\n', 'GET', 'SWB_ERR_BAD_REQUEST', 'RFC 9112 §4'],
  ['two-digit status', 'HTTP/1.1 20 OK\r\n\r\n', 'GET', 'SWB_ERR_BAD_REQUEST', 'RFC 9112 §4'],
  ['lower-case version', 'http/1.1 200 OK\r\n\r\n', 'GET', 'SWB_ERR_BAD_REQUEST', 'RFC 9112 §2.3'],
  [
    'head over the limit',
    `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(MAX)}\r\n\r\n`,
    'GET',
    'SWB_ERR_HEADER_TOO_LARGE',
    'RFC 9112 §4',
  ],
];

describe('peekHttp1Response', () => {
  const cases = rows.map(([name, head, method, expected, spec]) => [name, spec, head, method, expected] as const);
  it.each(cases)('%s (%s)', (_name, _spec, head, method, expected) => {
    for (const step of [1, 7, 100000]) expect(framingOf(head, method, step)).toEqual(expected);
  });

  it('reports status, version and connection close', () => {
    const bytes = b('HTTP/1.0 404 Not Found\r\nServer: x\r\nContent-Length: 2\r\n\r\nhi');
    const r = peekHttp1Response(bytes, MAX, 'GET');
    expect(r).toMatchObject({
      status: 404,
      versionMinor: 0,
      headLength: bytes.length - 2,
      connectionClose: true,
    });
    const keep = peekHttp1Response(b('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), MAX, 'GET');
    expect(keep?.connectionClose).toBe(false);
  });

  it('never throws anything but SwitchboardError, and splits do not matter', () => {
    const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n';
    fc.assert(
      fc.property(
        fc.nat(head.length - 1),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 1, max: 9 }),
        (at, byte, step) => {
          const mutated = head.slice(0, at) + String.fromCharCode(byte) + head.slice(at + 1);
          expect(framingOf(mutated, 'GET', step)).toEqual(framingOf(mutated, 'GET', 100000));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('needs more bytes until the head ends', () => {
    expect(peekHttp1Response(b('HTTP/1.1 200 OK\r\nContent-Le'), MAX, 'GET')).toBeUndefined();
  });
});
