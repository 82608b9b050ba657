import { describe, expect, it } from 'vitest';
import type { Request } from '../../src/contracts/types.ts';
import {
  type ConnectionFields,
  createHeadRequest,
  createRequest,
  decodeQueryComponent,
  type RequestInit,
} from '../../src/request/request.ts';

const base: RequestInit = {
  protocol: 'http1',
  host: 'www.example.test',
  port: 8080,
  path: '/a',
  target: '/a?x=1',
  query: 'x=1&y=%41%42&x=2&flag&sp=a+b&bad=%zz%4&utf=caf%C3%A9&%6Eame=v&empty=',
  method: 'GET',
  headers: [
    ['Host', 'www.example.test:8080'],
    ['X-Multi', 'one'],
    ['x-multi', 'two'],
    ['Cookie', 'a=1; b=2;c=3'],
    ['COOKIE', 'b=overridden; q="quoted"; =noname; novalue'],
  ],
  clientIp: '192.0.2.1',
  clientPort: 5555,
  localIp: '127.0.0.1',
  localPort: 80,
  listener: 'web',
};

describe('createRequest', () => {
  it('is frozen and carries the plain fields, with defaults', () => {
    const r = createRequest(base);
    expect(Object.isFrozen(r)).toBe(true);
    expect(r.host).toBe('www.example.test');
    expect(r.port).toBe(8080);
    expect(r.peerIp).toBe('192.0.2.1');
    expect(r.secure).toBe(false);
    expect(r.trustedClient).toBe(false);
    expect(r.alpn).toEqual([]);
    expect(r.sni).toBeUndefined();
    expect(() => {
      (r as { host: string }).host = 'evil';
    }).toThrow(TypeError);
  });

  it('looks headers up case-insensitively, first value and all values in order', () => {
    const r = createRequest(base);
    expect(r.header('x-MULTI')).toBe('one');
    expect(r.headerValues('X-Multi')).toEqual(['one', 'two']);
    expect(r.header('absent')).toBeUndefined();
    expect(r.headerValues('absent')).toEqual([]);
  });

  it('parses cookies across Cookie lines, first occurrence wins, quotes removed (RFC 6265 §4.2.1)', () => {
    const r = createRequest(base);
    expect(r.cookie('a')).toBe('1');
    expect(r.cookie('b')).toBe('2');
    expect(r.cookie('c')).toBe('3');
    expect(r.cookie('q')).toBe('quoted');
    expect(r.cookie('novalue')).toBeUndefined();
    expect(r.cookie('zzz')).toBeUndefined();
  });

  it('reads query parameters: first occurrence, percent-decoded, never throws', () => {
    const r = createRequest(base);
    expect(r.queryParam('x')).toBe('1');
    expect(r.queryParam('y')).toBe('AB');
    expect(r.queryParam('flag')).toBe('');
    expect(r.queryParam('sp')).toBe('a b');
    expect(r.queryParam('bad')).toBe('%zz%4');
    expect(r.queryParam('utf')).toBe('café');
    expect(r.queryParam('name')).toBe('v');
    expect(r.queryParam('empty')).toBe('');
    expect(r.queryParam('nope')).toBeUndefined();
  });

  it('works with no headers and no query (TLS passthrough shape)', () => {
    const r = createRequest({
      protocol: 'tls',
      host: 'sni.example.test',
      sni: 'sni.example.test',
      alpn: ['h2', 'http/1.1'],
      clientIp: '::1',
      clientPort: 1,
      localIp: '::1',
      localPort: 443,
      secure: true,
      listener: 'tls',
    });
    expect(r.path).toBeUndefined();
    expect(r.query).toBe('');
    expect(r.header('host')).toBeUndefined();
    expect(r.cookie('a')).toBeUndefined();
    expect(r.queryParam('a')).toBeUndefined();
    expect(r.alpn).toEqual(['h2', 'http/1.1']);
  });
});

describe('createHeadRequest', () => {
  const conn: ConnectionFields = {
    clientIp: '192.0.2.1',
    clientPort: 5555,
    peerIp: '10.0.0.1',
    sessionIp: '192.0.2.1',
    local: { localAddress: '127.0.0.1', localPort: 80 },
    vip: '198.51.100.1',
    vipPort: 443,
    trustedClient: true,
    clientFrom: 'proxy',
    listener: 'web',
    secure: true,
    sni: 'www.example.test',
    alpn: ['http/1.1'],
    tls: undefined,
  };
  const head = {
    host: 'www.example.test',
    port: 8080,
    path: '/a',
    target: '/a?x=1',
    query: 'x=1',
    method: 'GET',
    headers: [
      ['Host', 'www.example.test:8080'],
      ['Cookie', 'a=1'],
    ] as const,
  };
  /** Everything a reader sees of a Request, getters and lookups included. */
  const view = (r: Request) => ({
    ...r,
    localIp: r.localIp,
    localPort: r.localPort,
    host: r.header('host'),
    cookie: r.cookie('a'),
    x: r.queryParam('x'),
  });

  it('is the Request createRequest makes of the connection fields and the head, one shape', () => {
    for (const forwarded of [undefined, '203.0.113.9']) {
      const r = createHeadRequest(conn, head, forwarded);
      const want = createRequest({
        ...conn,
        clientIp: forwarded ?? conn.clientIp,
        clientPort: forwarded === undefined ? conn.clientPort : 0,
        trustedClient: forwarded !== undefined || conn.trustedClient,
        clientFrom: forwarded === undefined ? 'proxy' : 'header',
        protocol: 'http1',
        ...head,
        headers: undefined,
        headersOf: head,
      });
      expect(Object.isFrozen(r)).toBe(true);
      expect(Object.keys(r)).toEqual(Object.keys(want));
      expect(view(r)).toEqual(view(want));
    }
    expect(createHeadRequest(conn, head, '203.0.113.9')).toMatchObject({
      clientIp: '203.0.113.9',
      clientPort: 0,
      clientFrom: 'header',
    });
    expect(createHeadRequest(conn, head, undefined).clientFrom).toBe('proxy');
  });
});

describe('decodeQueryComponent', () => {
  it.each([
    ['plain', 'plain'],
    ['a%20b', 'a b'],
    ['a+b', 'a b'],
    ['%', '%'],
    ['%G1', '%G1'],
    ['%e2%82%ac', '€'],
    ['é%41', 'éA'],
  ])('%s → %s', (input, expected) => {
    expect(decodeQueryComponent(input)).toBe(expected);
  });
});
