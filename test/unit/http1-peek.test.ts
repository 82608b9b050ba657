/** Accepted heads: what routing sees, with odd-but-valid casing, spacing and forms. */
import { describe, expect, it } from 'vitest';
import { type Http1Head, peekHttp1 } from '../../src/peek/http1.ts';
import { allSplits, raw, verdictOf } from './http1-helpers.ts';

const MAX = 16384;

// [name, head, expected subset of Http1Head, source]
const accepted: [string, string, Partial<Http1Head>, string][] = [
  [
    'odd casing and OWS in Host',
    'GET /x HTTP/1.1\r\nhOsT:   Example.COM  \r\n\r\n',
    { host: 'example.com', port: undefined, path: '/x', headers: [['hOsT', 'Example.COM']] },
    'RFC 9110 §5.1 (case-insensitive names), RFC 9112 §5.1 (OWS)',
  ],
  [
    'tabs as OWS',
    'GET / HTTP/1.1\r\nHost:\ta.test\t\r\nX:\t\r\n\r\n',
    {
      host: 'a.test',
      headers: [
        ['Host', 'a.test'],
        ['X', ''],
      ],
    },
    'RFC 9112 §5.1',
  ],
  [
    'Host port and trailing dot',
    'GET / HTTP/1.1\r\nHost: WWW.Example.Test.:8443\r\n\r\n',
    { host: 'www.example.test', port: 8443 },
    'RFC 9110 §7.2, DESIGN',
  ],
  [
    'IPv6 Host keeps brackets',
    'GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n',
    { host: '[::1]', port: 8080 },
    'RFC 3986 §3.2.2',
  ],
  ['empty Host', 'GET / HTTP/1.1\r\nHost:\r\n\r\n', { host: '', port: undefined }, 'RFC 9112 §3.2'],
  [
    'path normalised, target kept',
    'GET /a/./b/../%63?q=%41&r HTTP/1.1\r\nHost: a\r\n\r\n',
    { target: '/a/./b/../%63?q=%41&r', path: '/a/c', query: 'q=%41&r' },
    'RFC 3986 §5.2.4, §2.3',
  ],
  [
    'query with unescaped odd characters',
    'GET /s?x="|{}^` HTTP/1.1\r\nHost: a\r\n\r\n',
    { path: '/s', query: 'x="|{}^`' },
    'our choice: query is not used for paths',
  ],
  [
    'absolute-form agrees with Host',
    'GET HTTP://A.test:80/p?q HTTP/1.1\r\nHost: a.test\r\n\r\n',
    { host: 'a.test', port: undefined, path: '/p', query: 'q' },
    '#8 RFC 9112 §3.2.2 (default port = absent)',
  ],
  [
    'absolute-form with empty path',
    'GET https://a.test?x=1 HTTP/1.1\r\nHost: a.test:443\r\n\r\n',
    { host: 'a.test', port: 443, path: '/', query: 'x=1' },
    'RFC 9112 §3.2.2',
  ],
  [
    'HTTP/1.0 without Host takes the absolute-form authority',
    'GET http://b.test:81/ HTTP/1.0\r\n\r\n',
    { host: 'b.test', port: 81, versionMinor: 0, connectionClose: true },
    'RFC 9112 §3.2.2, §9.3',
  ],
  [
    'HTTP/1.0 keep-alive',
    'GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n',
    { host: '', connectionClose: false },
    'RFC 9112 §9.3',
  ],
  ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n', { path: '*', query: '' }, 'RFC 9112 §3.2.4'],
  [
    'CONNECT authority-form',
    'CONNECT Tunnel.test:443 HTTP/1.1\r\nHost: tunnel.test:443\r\n\r\n',
    { host: 'tunnel.test', port: 443, path: undefined, bodyFraming: { kind: 'none' } },
    'RFC 9112 §3.2.3',
  ],
  [
    'Content-Length',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 000123\r\n\r\n',
    { bodyFraming: { kind: 'length', length: 123 } },
    'RFC 9112 §6.3 r6',
  ],
  [
    '15-digit Content-Length',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999999999\r\n\r\n',
    { bodyFraming: { kind: 'length', length: 999999999999999 } },
    '#4',
  ],
  [
    'Content-Length 0',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n',
    { bodyFraming: { kind: 'none' } },
    'RFC 9112 §6.3',
  ],
  [
    'chunked, any case, after a known coding',
    'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip , Chunked\r\n\r\n',
    { bodyFraming: { kind: 'chunked' } },
    'RFC 9112 §6.1, §7 (case-insensitive)',
  ],
  [
    'GET with a body is fine',
    'GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n',
    { bodyFraming: { kind: 'length', length: 2 } },
    'RFC 9110 §9.3.1',
  ],
  [
    'upgrade, close, expect',
    'GET /ws HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\nExpect: 100-Continue\r\n\r\n',
    { upgrade: true, upgradeTo: ['websocket'], connectionClose: false, expectContinue: true },
    'RFC 9110 §7.8, §10.1.1',
  ],
  [
    'Upgrade without Connection: upgrade is not an upgrade',
    'GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: close\r\n\r\n',
    { upgrade: false, upgradeTo: [], connectionClose: true },
    'RFC 9110 §7.8',
  ],
  [
    'one leading CRLF is skipped',
    '\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n',
    { method: 'GET', headLength: 29 },
    '#13 RFC 9112 §2.2',
  ],
  [
    'obs-text in a value is allowed',
    'GET / HTTP/1.1\r\nHost: a\r\nX-Name: caf\xe9\r\n\r\n',
    {
      headers: [
        ['Host', 'a'],
        ['X-Name', 'caf\xe9'],
      ],
    },
    'RFC 9110 §5.5 obs-text',
  ],
  ['WebDAV method', 'PROPFIND /d HTTP/1.1\r\nHost: a\r\n\r\n', { method: 'PROPFIND', path: '/d' }, 'RFC 4918 §9.1'],
];

describe('peekHttp1: accepted heads', () => {
  it.each(accepted)('%s', (_name, head, expected) => {
    const bytes = raw(`${head}BODY`);
    const whole = verdictOf(() => peekHttp1(bytes, MAX));
    expect(whole).toHaveProperty('head');
    const got = (whole as { head: Http1Head }).head;
    expect(got).toMatchObject(expected);
    expect(got.headLength).toBe(raw(head).length);
    for (const split of allSplits(bytes, MAX)) expect(split).toEqual(whole);
  });

  it('returns undefined until the head is complete, at every prefix', () => {
    const bytes = raw('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    for (let n = 0; n < bytes.length; n++) expect(peekHttp1(bytes.subarray(0, n), MAX)).toBeUndefined();
    expect(peekHttp1(bytes, MAX)?.host).toBe('a');
  });

  it('keeps the exact target and every header in order', () => {
    const head = peekHttp1(raw('GET /A%2fb/./?x HTTP/1.1\r\nB: 1\r\nHost: h\r\nb: 2\r\n\r\n'), MAX)!;
    expect(head.target).toBe('/A%2fb/./?x');
    expect(head.path).toBe('/A/b/'); // %2f read as "/" for matching (escapedSlashes: decode)
    expect(head.headers).toEqual([
      ['B', '1'],
      ['Host', 'h'],
      ['b', '2'],
    ]);
  });
});
