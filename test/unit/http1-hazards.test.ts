/**
 * The hazard table of reference/peers-reliability.md §3 (rows 1–13), one row per vector, each
 * fed whole, 1 byte at a time and 7 bytes at a time.
 */
import { describe, expect, it } from 'vitest';
import { peekHttp1 } from '../../src/peek/http1.ts';
import { allSplits, raw, verdictOf } from './http1-helpers.ts';

const MAX = 16384;
const H = 'Host: a.test\r\n';

// [vector, request head (latin1), expected error code, hazard row + spec]
const rejected: [string, string, string, string][] = [
  [
    'CL.TE',
    `POST / HTTP/1.1\r\n${H}Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n`,
    'BAD_REQUEST',
    '#1 RFC 9112 §6.3 r3',
  ],
  [
    'TE.CL',
    `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n`,
    'BAD_REQUEST',
    '#2 RFC 9112 §6.3 r3',
  ],
  [
    'TE space before colon',
    `POST / HTTP/1.1\r\n${H}Transfer-Encoding : chunked\r\n\r\n`,
    'BAD_REQUEST',
    '#3/#7 RFC 9112 §5.1',
  ],
  ['TE xchunked', `POST / HTTP/1.1\r\n${H}Transfer-Encoding: xchunked\r\n\r\n`, 'BAD_REQUEST', '#3 RFC 9112 §6.3 r4'],
  [
    'TE chunked, identity',
    `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked, identity\r\n\r\n`,
    'BAD_REQUEST',
    '#3 RFC 9112 §6.1',
  ],
  [
    'TE chunked, chunked',
    `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked, chunked\r\n\r\n`,
    'BAD_REQUEST',
    '#3 RFC 9112 §6.1',
  ],
  ['TE gzip alone', `POST / HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\n`, 'BAD_REQUEST', '#3 RFC 9112 §6.3 r4'],
  [
    'TE unknown coding first',
    `POST / HTTP/1.1\r\n${H}Transfer-Encoding: foo, chunked\r\n\r\n`,
    'BAD_REQUEST',
    '#3 RFC 9112 §6.1 (501 → 400)',
  ],
  [
    'TE two lines',
    `POST / HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n`,
    'BAD_REQUEST',
    '#3',
  ],
  [
    'TE \\x0b in value',
    `POST / HTTP/1.1\r\n${H}Transfer-Encoding: \x0bchunked\r\n\r\n`,
    'BAD_REQUEST',
    '#3 RFC 9110 §5.5',
  ],
  [
    'TE \\x0c after name',
    `POST / HTTP/1.1\r\n${H}Transfer-Encoding\x0c: chunked\r\n\r\n`,
    'BAD_REQUEST',
    '#3 RFC 9110 §5.1',
  ],
  ['TE \\xa0 in value', `POST / HTTP/1.1\r\n${H}Transfer-Encoding: \xa0chunked\r\n\r\n`, 'BAD_REQUEST', '#3'],
  [
    'TE \\xff in name',
    `POST / HTTP/1.1\r\n${H}Transfer-\xffEncoding: chunked\r\n\r\n`,
    'BAD_REQUEST',
    '#3 RFC 9110 §5.1',
  ],
  ['TE with parameter', `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked;q=1\r\n\r\n`, 'BAD_REQUEST', '#3'],
  ['TE empty element', `POST / HTTP/1.1\r\n${H}Transfer-Encoding: gzip,,chunked\r\n\r\n`, 'BAD_REQUEST', '#3'],
  ['TE folded', `POST / HTTP/1.1\r\n${H}Transfer-Encoding:\r\n chunked\r\n\r\n`, 'BAD_REQUEST', '#3/#5 RFC 9112 §5.2'],
  ['TE on HTTP/1.0', `POST / HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n`, 'BAD_REQUEST', '#3 RFC 9112 §6.1'],
  [
    'CL differing lines',
    `POST / HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 6\r\n\r\n`,
    'BAD_REQUEST',
    '#4 RFC 9112 §6.3 r5',
  ],
  ['CL differing list', `POST / HTTP/1.1\r\n${H}Content-Length: 5, 6\r\n\r\n`, 'BAD_REQUEST', '#4 RFC 9110 §8.6'],
  [
    'CL identical lines',
    `POST / HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 5\r\n\r\n`,
    'BAD_REQUEST',
    '#4 (our choice, as llhttp and nginx)',
  ],
  [
    'CL identical list',
    `POST / HTTP/1.1\r\n${H}Content-Length: 5, 5\r\n\r\n`,
    'BAD_REQUEST',
    '#4 (our choice, as llhttp and nginx)',
  ],
  ['CL sign', `POST / HTTP/1.1\r\n${H}Content-Length: +5\r\n\r\n`, 'BAD_REQUEST', '#4 RFC 9110 §8.6'],
  ['CL negative', `POST / HTTP/1.1\r\n${H}Content-Length: -1\r\n\r\n`, 'BAD_REQUEST', '#4'],
  ['CL hex', `POST / HTTP/1.1\r\n${H}Content-Length: 0x5\r\n\r\n`, 'BAD_REQUEST', '#4'],
  ['CL suffix', `POST / HTTP/1.1\r\n${H}Content-Length: 5x\r\n\r\n`, 'BAD_REQUEST', '#4'],
  ['CL underscore', `POST / HTTP/1.1\r\n${H}Content-Length: 1_0\r\n\r\n`, 'BAD_REQUEST', '#4'],
  [
    'CL 16 digits',
    `POST / HTTP/1.1\r\n${H}Content-Length: 1000000000000000\r\n\r\n`,
    'BAD_REQUEST',
    '#4 (> 2^53 guard)',
  ],
  ['CL 25 digits', `POST / HTTP/1.1\r\n${H}Content-Length: 1000000000000000000000000\r\n\r\n`, 'BAD_REQUEST', '#4'],
  ['CL empty', `POST / HTTP/1.1\r\n${H}Content-Length:\r\n\r\n`, 'BAD_REQUEST', '#4'],
  ['CL empty list element', `POST / HTTP/1.1\r\n${H}Content-Length: 5,\r\n\r\n`, 'BAD_REQUEST', '#4'],
  ['obs-fold on Host', 'GET / HTTP/1.1\r\nHost: public\r\n evil.example\r\n\r\n', 'BAD_REQUEST', '#5 RFC 9112 §5.2'],
  ['obs-fold with tab', `GET / HTTP/1.1\r\n${H}X: a\r\n\tb\r\n\r\n`, 'BAD_REQUEST', '#5 RFC 9112 §5.2'],
  ['bare LF everywhere', 'GET / HTTP/1.1\nHost: a\n\n', 'BAD_REQUEST', '#6 RFC 9112 §2.2'],
  ['bare LF in a header', `GET / HTTP/1.1\r\n${H}X: a\nY: b\r\n\r\n`, 'BAD_REQUEST', '#6 RFC 9112 §2.2'],
  ['bare CR in a value', `GET / HTTP/1.1\r\n${H}X: a\rb\r\n\r\n`, 'BAD_REQUEST', '#6 RFC 9112 §2.2'],
  ['bare CR in request line', 'GET /\r HTTP/1.1\r\nHost: a\r\n\r\n', 'BAD_REQUEST', '#6 RFC 9112 §2.2'],
  ['CRLF CR LF ending', `GET / HTTP/1.1\r\n${H}\r\r\n`, 'BAD_REQUEST', '#6 RFC 9112 §2.2'],
  ['Host space before colon', 'GET / HTTP/1.1\r\nHost : evil\r\n\r\n', 'BAD_REQUEST', '#7 RFC 9112 §5.1'],
  ['CL tab before colon', `POST / HTTP/1.1\r\n${H}Content-Length\t: 5\r\n\r\n`, 'BAD_REQUEST', '#7 RFC 9112 §5.1'],
  ['empty name', `GET / HTTP/1.1\r\n${H}: x\r\n\r\n`, 'BAD_REQUEST', '#7 RFC 9110 §5.1'],
  ['NUL in name', 'GET / HTTP/1.1\r\nHo\x00st: a\r\n\r\n', 'BAD_REQUEST', '#7 RFC 9110 §5.1'],
  ['\\x80 in name', `GET / HTTP/1.1\r\n${H}X\x80: a\r\n\r\n`, 'BAD_REQUEST', '#7 RFC 9110 §5.1'],
  ['NUL in value', `GET / HTTP/1.1\r\n${H}X: a\x00b\r\n\r\n`, 'BAD_REQUEST', '#7 RFC 9110 §5.5'],
  ['DEL in value', `GET / HTTP/1.1\r\n${H}X: a\x7fb\r\n\r\n`, 'BAD_REQUEST', '#7 RFC 9110 §5.5'],
  ['no colon', `GET / HTTP/1.1\r\n${H}NoColon\r\n\r\n`, 'BAD_REQUEST', '#7 RFC 9112 §5'],
  [
    'absolute-form ≠ Host',
    'GET http://internal/ HTTP/1.1\r\nHost: public\r\n\r\n',
    'BAD_REQUEST',
    '#8 RFC 9112 §3.2.2, DESIGN',
  ],
  [
    'absolute-form port ≠ Host port',
    'GET http://a:81/ HTTP/1.1\r\nHost: a\r\n\r\n',
    'BAD_REQUEST',
    '#8 RFC 9112 §3.2.2',
  ],
  ['absolute-form userinfo', 'GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n', 'BAD_REQUEST', '#8 RFC 9110 §4.2.4'],
  ['absolute-form ftp scheme', 'GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n', 'BAD_REQUEST', '#8 RFC 9112 §3.2.2'],
  ['CONNECT ≠ Host', 'CONNECT a:443 HTTP/1.1\r\nHost: b:443\r\n\r\n', 'BAD_REQUEST', '#8 RFC 9112 §3.2.3'],
  ['two Host lines', 'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 'BAD_REQUEST', '#9 RFC 9112 §3.2'],
  ['two identical Host lines', 'GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n', 'BAD_REQUEST', '#9 RFC 9112 §3.2'],
  ['no Host on 1.1', 'GET / HTTP/1.1\r\nX: y\r\n\r\n', 'BAD_REQUEST', '#9 RFC 9112 §3.2'],
  ['Host a b', 'GET / HTTP/1.1\r\nHost: a b\r\n\r\n', 'BAD_REQUEST', '#9 RFC 3986 §3.2.2'],
  ['Host user@a', 'GET / HTTP/1.1\r\nHost: user@a\r\n\r\n', 'BAD_REQUEST', '#9 RFC 9110 §7.2'],
  ['Host a:80:80', 'GET / HTTP/1.1\r\nHost: a:80:80\r\n\r\n', 'BAD_REQUEST', '#9 RFC 3986 §3.2.3'],
  ['Host bad port', 'GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n', 'BAD_REQUEST', '#9 RFC 3986 §3.2.3'],
  ['Host port > 65535', 'GET / HTTP/1.1\r\nHost: a:65536\r\n\r\n', 'BAD_REQUEST', '#9 RFC 3986 §3.2.3'],
  ['Host empty port', 'GET / HTTP/1.1\r\nHost: a:\r\n\r\n', 'BAD_REQUEST', '#9 (our choice: strict)'],
  ['Host comma', 'GET / HTTP/1.1\r\nHost: a,b\r\n\r\n', 'BAD_REQUEST', '#9 (our choice: strict)'],
  ['Host bad IPv6', 'GET / HTTP/1.1\r\nHost: [::g]\r\n\r\n', 'BAD_REQUEST', '#9 RFC 3986 §3.2.2'],
  ['Host slash', 'GET / HTTP/1.1\r\nHost: a/b\r\n\r\n', 'BAD_REQUEST', '#9 RFC 3986 §3.2.2'],
  ['double space', `GET  / HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §3'],
  ['trailing space', `GET / HTTP/1.1 \r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §3'],
  ['leading space', ` GET / HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §3'],
  ['tab separator', `GET\t/ HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §3'],
  ['lower-case version', `GET / http/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §2.3'],
  ['HTTP/1.2', `GET / HTTP/1.2\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §2.3'],
  ['HTTP/1.32', `GET / HTTP/1.32\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §2.3'],
  ['HTTP/2.0', `GET / HTTP/2.0\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §2.3'],
  ['HTTP/0.9', 'GET /\r\n\r\n', 'BAD_REQUEST', '#11 RFC 9112 §3'],
  ['bad method token', `G=":<> / HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9110 §9.1'],
  ['unknown method (llhttp table)', `FOO / HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 (llhttp method table)'],
  ['GET *', `GET * HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#8/#11 RFC 9112 §3.2.4'],
  ['CONNECT /', `CONNECT / HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#8/#11 RFC 9112 §3.2.3'],
  ['CONNECT without port', 'CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n', 'BAD_REQUEST', '#11 RFC 9112 §3.2.3'],
  ['GET admin', `GET admin HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#8/#11 RFC 9112 §3.2.1'],
  ['fragment in target', `GET /a#b HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §3.2.1'],
  ['backslash in path', `GET /a\\..\\admin HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 3986 §3.3'],
  ['DEL in target', `GET /a\x7f HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §3'],
  ['\\xff in target', `GET /a\xff HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#11 RFC 9112 §3'],
  ['path climbs above root', `GET /../etc HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', 'DESIGN, RFC 3986 §5.2.4'],
  ['encoded NUL in path', `GET /a%00 HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', 'DESIGN'],
  ['two leading empty lines', `\r\n\r\nGET / HTTP/1.1\r\n${H}\r\n`, 'BAD_REQUEST', '#13 RFC 9112 §2.2 (we skip one)'],
  ['whitespace-led first header', `GET / HTTP/1.1\r\n ${H}\r\n`, 'BAD_REQUEST', '#13 RFC 9112 §2.2'],
  ['request line over the limit', `GET /${'a'.repeat(MAX)} HTTP/1.1\r\n${H}\r\n`, 'URI_TOO_LONG', 'RFC 9112 §3 (414)'],
  [
    'head over the limit',
    `GET / HTTP/1.1\r\n${H}X: ${'a'.repeat(MAX)}\r\n\r\n`,
    'HEADER_TOO_LARGE',
    'RFC 6585 §5 (431)',
  ],
  // Issue 17 item 5: after an upgrade to h2c one connection carries requests no rule sees.
  [
    'Upgrade: h2c',
    `GET / HTTP/1.1\r\n${H}Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n`,
    'BAD_REQUEST',
    'RFC 9113 §3.1 (the h2c upgrade is deprecated)',
  ],
  [
    'Upgrade: h2c without Connection: upgrade',
    `GET / HTTP/1.1\r\n${H}Upgrade: h2c\r\n\r\n`,
    'BAD_REQUEST',
    'RFC 9113 §3.1 (a lenient backend may switch anyway)',
  ],
  [
    'Upgrade: H2C/1 after websocket',
    `GET / HTTP/1.1\r\n${H}Connection: upgrade\r\nUpgrade: websocket, H2C/1\r\n\r\n`,
    'BAD_REQUEST',
    'RFC 9110 §7.8 (protocol-name case-insensitive)',
  ],
  [
    'Upgrade: h2 on a second line',
    `GET / HTTP/1.1\r\n${H}Connection: upgrade\r\nUpgrade: websocket\r\nUpgrade: h2\r\n\r\n`,
    'BAD_REQUEST',
    'RFC 7540 §3.3 (h2 is never an Upgrade token)',
  ],
];

describe('peekHttp1: hazard table (reference/peers-reliability.md §3)', () => {
  const rows = rejected.map(([name, head, code, spec]) => [name, code, spec, head] as const);
  it.each(rows)('%s → %s (%s)', (_name, code, _spec, head) => {
    const bytes = raw(head);
    const whole = verdictOf(() => peekHttp1(bytes, MAX));
    expect(whole).toMatchObject({ code: `SWB_ERR_${code}` });
    expect((whole as { message: string }).message).toMatch(/^http1: /);
    for (const split of allSplits(bytes, MAX)) expect(split).toEqual(whole);
  });

  it('names the header and the byte in its messages', () => {
    const v = verdictOf(() => peekHttp1(raw('GET / HTTP/1.1\r\nHost: a\r\nX: y\r\nBad Name: z\r\n\r\n'), MAX));
    expect(v).toEqual({
      code: 'SWB_ERR_BAD_REQUEST',
      message: 'http1: whitespace before colon in header 3 at byte 34',
    });
  });

  it('rejects a bare LF as soon as it arrives, not after the limit', () => {
    expect(verdictOf(() => peekHttp1(raw('GET / HTTP/1.1\n'), MAX))).toMatchObject({ code: 'SWB_ERR_BAD_REQUEST' });
    expect(verdictOf(() => peekHttp1(raw('\x16\x03\x01'), MAX))).toMatchObject({ code: 'SWB_ERR_BAD_REQUEST' });
  });

  it('answers 414 when no CRLF arrives within the limit, 431 when the head does not end', () => {
    expect(verdictOf(() => peekHttp1(raw('GET /aaaaaaaa'), 10))).toMatchObject({ code: 'SWB_ERR_URI_TOO_LONG' });
    expect(verdictOf(() => peekHttp1(raw('GET / HTTP/1.1\r\nHost'), 20))).toMatchObject({
      code: 'SWB_ERR_HEADER_TOO_LARGE',
    });
    expect(verdictOf(() => peekHttp1(raw('GET / HTTP/1.1\r\nHost'), 21))).toEqual({ more: true });
  });

  it('accepts a head that ends exactly at the limit, and not one byte more', () => {
    const head = raw('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    expect(verdictOf(() => peekHttp1(head, head.length))).toHaveProperty('head.headLength', head.length);
    expect(verdictOf(() => peekHttp1(head, head.length - 1))).toMatchObject({ code: 'SWB_ERR_HEADER_TOO_LARGE' });
  });
});
