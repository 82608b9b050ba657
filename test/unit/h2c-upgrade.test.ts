/**
 * `Upgrade: h2c` (issue 40 item 7): the head checks (src/peek/h2c-upgrade.ts, through the
 * HTTP/1 peek of an `h2c: route` listener), the HEADERS frames of stream 1 decoded with the
 * peek's own HPACK decoder and node's http2 server, and the byte stitching (panels/net).
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { stitch } from '../../panels/net/h2c-upgrade.ts';
import { FLAG, FRAME } from '../../src/peek/h2-frames.ts';
import { H2_PREFACE } from '../../src/peek/h2c.ts';
import { isH2cUpgrade, upgradeHeaderBlock, upgradeHeadersFrames } from '../../src/peek/h2c-upgrade.ts';
import { HpackDecoder } from '../../src/peek/hpack.ts';
import { DEFAULT_MAX_HEADER_COUNT, type Http1Head, Http1HeadScanner } from '../../src/peek/http1.ts';
import { Sniffer } from '../../src/peek/sniff.ts';

const SETTINGS = 'HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n';
const head = (
  fields = `Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n${SETTINGS}`,
  line = 'GET /a//b?x=%41 HTTP/1.1',
) =>
  Buffer.from(
    `${line}\r\nHost: Example.test:8080\r\nX-Case: One\r\nKeep-Alive: 5\r\nTE: trailers\r\n${fields}\r\n`,
    'latin1',
  );

const peek = (buf: Buffer, h2c = true): Http1Head | undefined =>
  new Http1HeadScanner(16384, undefined, DEFAULT_MAX_HEADER_COUNT, h2c).feed(buf);

describe('the head checks', () => {
  it('an h2c: route peek lets a well-formed upgrade through; any other peek refuses it as before', () => {
    const h = peek(head())!;
    expect(isH2cUpgrade(h)).toBe(true);
    expect(() => peek(head(), false)).toThrow(/Upgrade: h2c is refused/);
  });

  it.each([
    [
      'a body (Content-Length)',
      `Content-Length: 3\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n${SETTINGS}`,
      /request body/,
    ],
    [
      'a body (chunked)',
      `Transfer-Encoding: chunked\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n${SETTINGS}`,
      /request body/,
    ],
    [
      'no HTTP2-Settings token',
      `Connection: Upgrade\r\nUpgrade: h2c\r\n${SETTINGS}`,
      /Connection: Upgrade, HTTP2-Settings/,
    ],
    ['no Connection', `Upgrade: h2c\r\n${SETTINGS}`, /Connection: Upgrade, HTTP2-Settings/],
    [
      'two HTTP2-Settings',
      `Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n${SETTINGS}${SETTINGS}`,
      /exactly one/,
    ],
    ['no HTTP2-Settings', 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n', /exactly one/],
    [
      'padded base64',
      'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABk==\r\n',
      /base64url/,
    ],
    [
      'a partial setting',
      'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMA\r\n',
      /base64url/,
    ],
    ['Upgrade: h2', `Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2\r\n${SETTINGS}`, /Upgrade: h2 is refused/],
  ])('%s: 400', (_what, fields, reason) => {
    expect(() => peek(head(fields))).toThrow(reason);
  });

  it('the sniffer lets it through on a cleartext route listener only (not allow, refuse or terminated TLS)', () => {
    const sniffed = (tls: 'off' | 'terminate', mode: 'allow' | 'refuse' | 'route') => {
      try {
        const s = new Sniffer(16384, tls, mode).decide(head());
        return s?.kind === 'http1' && isH2cUpgrade(s.head) ? 'h2c' : s?.kind;
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(sniffed('off', 'route')).toBe('h2c');
    for (const [tls, mode] of [
      ['off', 'allow'],
      ['off', 'refuse'],
      ['terminate', 'route'],
    ] as const) {
      expect(sniffed(tls, mode)).toMatch(/Upgrade: h2c is refused/);
    }
  });

  it('an empty HTTP2-Settings (no settings) is valid', () => {
    expect(
      isH2cUpgrade(peek(head('Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: \r\n'))!),
    ).toBe(true);
  });
});

describe('stream 1', () => {
  it('decodes with the HPACK decoder: pseudo-fields first, the target as sent, connection fields gone, the table untouched', () => {
    const h = peek(head())!;
    const decoder = new HpackDecoder();
    const fields = decoder.decode(upgradeHeaderBlock(h), 1 << 20);
    expect(fields).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/a//b?x=%41'],
      [':authority', 'Example.test:8080'],
      ['x-case', 'One'],
      ['te', 'trailers'],
    ]);
    expect(decoder.dynamicEntries()).toEqual([]);
    const frames = upgradeHeadersFrames(h);
    expect(frames[3]).toBe(FRAME.HEADERS);
    expect(frames[4]).toBe(FLAG.END_STREAM | FLAG.END_HEADERS);
    expect(frames.readUInt32BE(5)).toBe(1);
  });

  it('a block over 16,384 bytes goes on in CONTINUATION frames', () => {
    const big = `X-Big: ${'a'.repeat(20_000)}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n${SETTINGS}`;
    const h = new Http1HeadScanner(65536, undefined, DEFAULT_MAX_HEADER_COUNT, true).feed(head(big))!;
    const frames = upgradeHeadersFrames(h);
    expect([frames[3], frames[4]]).toEqual([FRAME.HEADERS, FLAG.END_STREAM]);
    const second = 9 + frames.readUIntBE(0, 3);
    expect([frames[second + 3], frames[second + 4]]).toEqual([FRAME.CONTINUATION, FLAG.END_HEADERS]);
    const block = Buffer.concat([frames.subarray(9, second), frames.subarray(second + 9)]);
    expect(new HpackDecoder().decode(block, 1 << 20)).toContainEqual(['x-big', 'a'.repeat(20_000)]);
  });

  it("node's http2 server reads the stitched bytes as stream 1, answers on it, and takes stream 3 after", async () => {
    const seen: Array<[number, IncomingHttpHeaders]> = [];
    const server = createServer();
    server.on('stream', (stream, headers) => {
      seen.push([stream.id ?? 0, headers]);
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const h = peek(head())!;
    const settings = Buffer.from([0, 0, 0, FRAME.SETTINGS, 0, 0, 0, 0, 0]);
    // Stream 3 in the same read: a literal-without-indexing block of its own.
    const block3 = Buffer.from([0x82, 0x86, 0x04, 0x02, 0x2f, 0x33, 0x01, 0x01, 0x61]); // GET http /3 authority a
    const headers3 = Buffer.concat([Buffer.from([0, 0, block3.length, FRAME.HEADERS, 5, 0, 0, 0, 3]), block3]);
    expect(stitch(h, H2_PREFACE.subarray(0, 10))).toBeUndefined();
    expect(stitch(h, Buffer.concat([H2_PREFACE, settings.subarray(0, 5)]))).toBeUndefined();
    const bytes = stitch(h, Buffer.concat([H2_PREFACE, settings, headers3])) as Buffer;
    const socket: Socket = connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    socket.on('data', (c) => got.push(c));
    socket.write(bytes);
    const deadline = Date.now() + 5000;
    while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    server.close();
    expect(seen.map(([id, hs]) => [id, hs[':path'], hs[':authority']])).toEqual([
      [1, '/a//b?x=%41', 'Example.test:8080'],
      [3, '/3', 'a'],
    ]);
    expect(seen[0]![1]['x-case']).toBe('One');
  });

  it('what is not a preface then SETTINGS is refused', () => {
    const h = peek(head())!;
    expect(stitch(h, Buffer.from('GET / HTTP/1.1\r\n'))).toMatchObject({
      reason: expect.stringMatching(/bad connection preface at byte 0/),
    });
    const ping = Buffer.from([0, 0, 8, FRAME.PING, 0, 0, 0, 0, 0]);
    expect(stitch(h, Buffer.concat([H2_PREFACE, ping]))).toMatchObject({
      reason: expect.stringMatching(/not SETTINGS/),
    });
  });
});
