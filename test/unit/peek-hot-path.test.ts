/**
 * The HTTP/1 hot path does no per-field string work it does not need (issue 18): llhttp's
 * cross-check decodes nothing, a response head runs neither llhttp nor a decoder, and the
 * Requests of a per-request connection read the connection's addresses once. Counted, never
 * timed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { peekHttp1 } from '../../src/peek/http1.ts';
import { peekHttp1Response } from '../../src/peek/http1-response.ts';
import { llhttpCallbacks, llhttpHead } from '../../src/peek/llhttp.ts';
import { clientAddressing } from '../../src/request/client-ip.ts';
import { http1Requests } from '../../src/request/from-peek.ts';

const b = (s: string) => Buffer.from(s, 'latin1');
const MAX = 16384;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('HTTP/1 hot path', () => {
  it('cross-checks a request head with llhttp without decoding a string per field', () => {
    const decode = vi.spyOn(TextDecoder.prototype, 'decode');
    const head = peekHttp1(b('GET /a?b=1 HTTP/1.1\r\nHost: x.test\r\nAccept: */*\r\nX-One: 1\r\n\r\n'), MAX);
    expect(head?.target).toBe('/a?b=1');
    expect(decode).not.toHaveBeenCalled();
  });

  it('lets llhttp call back into JS not at all: every function it imports is a WebAssembly one', () => {
    // Message begin/end, status, body, every field name and value, the URL and the head's end were
    // WASM→JS calls through V8's wrappers (src/peek/llhttp-counters.ts).
    expect(llhttpCallbacks()).toBe(0);
    const head = peekHttp1(b('POST /a HTTP/1.1\r\nHost: x.test\r\nContent-Length: 2\r\nX-One: 1\r\n\r\nhi'), MAX);
    expect(head?.headers.length).toBe(3);
  });

  it('reads a request head on its bytes: no string per field line until the headers are asked for', () => {
    const bytes = b('GET /a?b=1 HTTP/1.1\r\nHost: x.test:8080\r\nAccept: */*\r\nUser-Agent: u\r\nX-One: 1\r\n\r\n');
    peekHttp1(bytes, MAX); // warm: llhttp instantiated
    const slice = vi.spyOn(String.prototype, 'slice');
    const stringify = vi.spyOn(Buffer.prototype, 'toString');
    const head = peekHttp1(bytes, MAX)!;
    const slices = slice.mock.calls.length;
    const strings = stringify.mock.calls.length;
    vi.restoreAllMocks();
    // One string for the target and the field lines; slices: those two, the path, the query, the
    // Host name. None per field.
    expect(strings).toBe(1);
    expect(slices).toBeLessThanOrEqual(5);
    expect(head).toMatchObject({ method: 'GET', host: 'x.test', port: 8080, path: '/a', query: 'b=1' });
    expect(head.headers).toEqual([
      ['Host', 'x.test:8080'],
      ['Accept', '*/*'],
      ['User-Agent', 'u'],
      ['X-One', '1'],
    ]);
    const request = http1Requests(undefined, { listener: 'web', socket: {} as never })(head);
    expect(request.header('user-agent')).toBe('u');
    expect(request.headerValues('x-one')).toEqual(['1']);
  });

  it("keeps llhttp's views of WASM memory right when a long head makes that memory grow", () => {
    const short = b('GET /s HTTP/1.1\r\nHost: x.test\r\nA: 1\r\n\r\n');
    const before = llhttpHead('REQUEST', short);
    expect(before).toMatchObject({ ok: true, urlAt: 4, urlLength: 2, versionMinor: 1, fields: 2 });
    // 4 MiB of field lines: more than llhttp's memory holds, so malloc grows it (the old buffer detaches).
    const long = b(
      `GET /long HTTP/1.1\r\nHost: x.test\r\n${'X-Fill: yyyyyyyyyyyyyyyyyyyyyyyy\r\n'.repeat(131072)}\r\n`,
    );
    expect(llhttpHead('REQUEST', long)).toMatchObject({ ok: true, urlAt: 4, urlLength: 5, fields: 131073 });
    expect(llhttpHead('REQUEST', short)).toMatchObject({
      ok: true,
      urlAt: 4,
      urlLength: 2,
      versionMinor: 1,
      fields: 2,
    });
    expect(llhttpHead('REQUEST', b('GET /x HTTP/1.1\r\nHost x\r\n\r\n')).ok).toBe(false);
  });

  it('still refuses what llhttp refuses (a method it does not know)', () => {
    expect(() => peekHttp1(b('FROB / HTTP/1.1\r\nHost: x.test\r\n\r\n'), MAX)).toThrow(/llhttp/);
  });

  it('frames a response head on its bytes: no decoder, no string for single-line framing fields', () => {
    const decode = vi.spyOn(TextDecoder.prototype, 'decode');
    const stringify = vi.spyOn(Buffer.prototype, 'toString');
    const r = peekHttp1Response(
      b(
        'HTTP/1.1 200 OK\r\nServer: s\r\nDate: d\r\nContent-Type: text/plain\r\n' +
          'Content-Length: 12\r\nConnection: keep-alive\r\nX-A: 1\r\n\r\n',
      ),
      MAX,
      'GET',
    );
    expect(r?.bodyFraming).toEqual({ kind: 'length', length: 12 });
    expect(r?.connectionClose).toBe(false);
    expect(decode).not.toHaveBeenCalled();
    // Content-Length and Connection are read on their bytes too.
    expect(stringify).not.toHaveBeenCalled();
  });

  it('builds every Request of a connection from addresses read once, the forwarded client per head', () => {
    const reads: Record<string, number> = {};
    const socket = {};
    for (const [key, value] of Object.entries({
      remoteAddress: '127.0.0.1',
      remotePort: 4000,
      localAddress: '127.0.0.2',
      localPort: 80,
    })) {
      Object.defineProperty(socket, key, {
        get: () => {
          reads[key] = (reads[key] ?? 0) + 1;
          return value;
        },
      });
    }
    const addressing = clientAddressing({ trustedSources: ['127.0.0.0/8'], clientIpFrom: 'header' });
    const build = http1Requests(undefined, { listener: 'web', socket: socket as never, addressing });
    const plain = build(peekHttp1(b('GET / HTTP/1.1\r\nHost: a.test\r\n\r\n'), MAX)!);
    const forwarded = build(
      peekHttp1(b('GET /b HTTP/1.1\r\nHost: b.test\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n'), MAX)!,
    );
    build(peekHttp1(b('GET /c HTTP/1.1\r\nHost: c.test\r\n\r\n'), MAX)!);
    expect(plain).toMatchObject({ clientIp: '127.0.0.1', clientPort: 4000, localIp: '127.0.0.2', host: 'a.test' });
    expect(forwarded).toMatchObject({ clientIp: '203.0.113.9', clientPort: 0, trustedClient: true, path: '/b' });
    expect(reads).toEqual({ remoteAddress: 1, remotePort: 1, localAddress: 1, localPort: 1 });
  });
});
