import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../src/base/errors.ts';
import { FLAG, FRAME } from '../../src/peek/h2-frames.ts';
import {
  goawayFrame,
  H2_ERROR,
  H2_PREFACE,
  type H2cHead,
  H2cScanner,
  H2PeekError,
  looksLikeH2c,
  peekH2c,
  startsLikeH2c,
} from '../../src/peek/h2c.ts';
import { HpackDecoder } from '../../src/peek/hpack.ts';
import { block, frame, headerBlocks, headers, huffmanEncode, integer, prelude, str } from '../fixtures/h2/build.ts';
import { capture, hasTool } from '../fixtures/h2/capture.ts';
import { CLIENT_CASES, type ClientCase } from '../fixtures/h2/clients.ts';

const MAX = 16384;
const REQ: [string, string][] = [
  [':method', 'GET'],
  [':scheme', 'http'],
  [':path', '/p?q=1'],
  [':authority', 'Www.Example.TEST.:8080'],
];
const request = (fields: readonly (readonly [string, string])[] = REQ, huffman = false) =>
  Buffer.concat([prelude(), headers(block(fields, huffman))]);

/** Result of peeking `buf` fed in the given chunks: the first non-undefined answer, or the error. */
function feed(buf: Buffer, cuts: number[]): H2cHead | undefined | H2PeekError {
  const points = [...cuts.filter((c) => c > 0 && c < buf.length).sort((a, b) => a - b), buf.length];
  // One incremental scanner across the reads, as the peek uses it.
  const scanner = new H2cScanner(MAX);
  for (const end of points) {
    try {
      const r = scanner.feed(buf.subarray(0, end));
      if (r !== undefined) return r;
    } catch (e) {
      if (e instanceof H2PeekError) return e;
      throw e;
    }
  }
  return undefined;
}

function peekError(buf: Buffer, max = MAX): H2PeekError {
  try {
    peekH2c(buf, max);
  } catch (e) {
    if (e instanceof H2PeekError) return e;
    throw e;
  }
  throw new Error('expected H2PeekError');
}

describe('looksLikeH2c (RFC 9113 §3.4)', () => {
  it.each([
    ['', undefined],
    ['P', undefined],
    ['PRI', undefined],
    ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r', undefined],
    ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', true],
    ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04', true],
    ['PRI / HTTP/1.1\r\n', false], // PRI is a valid HTTP/1 method token
    ['GET / HTTP/1.1\r\n', false],
    ['\x16\x03\x01', false],
  ])('%j → %s', (s, want) => expect(looksLikeH2c(Buffer.from(s, 'latin1'))).toBe(want));
});

describe('startsLikeH2c: the sniffer calls bytes h2c from the preface request line on (RFC 9113 §3.4)', () => {
  it.each([
    ['', undefined],
    ['PRI', undefined], // PRI is a valid HTTP/1 method token
    ['PRI * HTTP/2.', undefined],
    ['PRI * HTTP/2.0', true], // no HTTP/1.x request has version 2.0
    ['PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n', true], // a bad preface: peekH2c refuses it with GOAWAY
    ['PRI * HTTP/1.1\r\n', false],
    ['PRI / HTTP/2.0\r\n', false],
    ['GET / HTTP/1.1\r\n', false],
  ])('%j → %s', (s, want) => expect(startsLikeH2c(Buffer.from(s, 'latin1'))).toBe(want));
});

/** Where the scanner says the client's first SETTINGS end, after one feed of `buf`. */
function clientSettingsEnd(buf: Buffer, max: number): number | undefined {
  const scanner = new H2cScanner(max);
  scanner.feed(buf);
  return scanner.settingsEnd;
}

describe('H2cScanner.settingsEnd: when the server may send its own SETTINGS (RFC 9113 §3.4)', () => {
  const settings = frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 4, 0, 0, 0xff, 0xff]));
  const full = Buffer.concat([H2_PREFACE, settings, headers(block(REQ))]);
  it.each([
    ['preface only', 24, undefined],
    ['preface + part of the SETTINGS header', 30, undefined],
    ['preface + SETTINGS header, payload missing', 33, undefined],
    ['preface + complete SETTINGS', 39, 39],
    ['preface + SETTINGS + HEADERS', full.length, 39],
  ])('%s → %s', (_name, bytes, want) => expect(clientSettingsEnd(full.subarray(0, bytes), MAX)).toBe(want));
  it('refuses what peekH2c refuses: a bad preface or a first frame that is not SETTINGS', () => {
    expect(() => clientSettingsEnd(Buffer.from('PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n', 'latin1'), MAX)).toThrow(
      /bad connection preface at byte 18/,
    );
    expect(() => clientSettingsEnd(Buffer.concat([H2_PREFACE, headers(block(REQ))]), MAX)).toThrow(/not settings/);
  });
});

describe('peekH2c on a minimal request', () => {
  it('extracts method, authority, host, port, path, scheme and regular headers', () => {
    const buf = request([...REQ, ['x-custom', 'a b'], ['cookie', 'k=v']]);
    expect(peekH2c(buf, MAX)).toEqual({
      method: 'GET',
      scheme: 'http',
      authority: 'Www.Example.TEST.:8080',
      path: '/p?q=1',
      host: 'www.example.test',
      port: 8080,
      headers: [
        ['x-custom', 'a b'],
        ['cookie', 'k=v'],
      ],
      streamId: 1,
      length: buf.length,
    });
  });

  it('length stops at the end of the header block; later bytes are left alone', () => {
    const head = request();
    const buf = Buffer.concat([head, frame(FRAME.DATA, 1, 1, Buffer.from('body'))]);
    expect(peekH2c(buf, MAX)?.length).toBe(head.length);
  });

  it('falls back to host without :authority; keeps IPv6 brackets (RFC 9113 §8.3.1)', () => {
    const r = peekH2c(request([...REQ.slice(0, 3), ['host', '[::1]:9']]), MAX);
    expect([r?.authority, r?.host, r?.port]).toEqual(['[::1]:9', '[::1]', 9]);
  });

  it('accepts CONNECT with only :method and :authority (RFC 9113 §8.5)', () => {
    const r = peekH2c(
      request([
        [':method', 'CONNECT'],
        [':authority', 'db.internal:5432'],
      ]),
      MAX,
    );
    expect([r?.method, r?.host, r?.port, r?.path, r?.scheme]).toEqual(['CONNECT', 'db.internal', 5432, '', '']);
  });

  it('skips SETTINGS, WINDOW_UPDATE, PING, PRIORITY and unknown frames before HEADERS (RFC 9113 §5.5)', () => {
    const buf = Buffer.concat([
      prelude(),
      frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 1, 0, 0, 0x10, 0])),
      frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.from([0, 0xff, 0, 0])),
      frame(FRAME.PING, 0, 0, Buffer.alloc(8)),
      frame(FRAME.PRIORITY, 0, 3, Buffer.from([0, 0, 0, 0, 200])),
      frame(0xfa, 0xff, 7, Buffer.from('grease')),
      frame(FRAME.SETTINGS, FLAG.ACK, 0),
      headers(block(REQ), 5),
    ]);
    expect(peekH2c(buf, MAX)?.streamId).toBe(5);
  });

  it('strips HEADERS padding and priority, joins CONTINUATION frames (RFC 9113 §6.2, §6.10)', () => {
    const b = block([...REQ, ['x-long', 'v'.repeat(300)]], true);
    const payload = Buffer.concat([
      Buffer.from([7]),
      Buffer.from([0, 0, 0, 0, 15]),
      b.subarray(0, 10),
      Buffer.alloc(7),
    ]);
    const buf = Buffer.concat([
      prelude(),
      frame(FRAME.HEADERS, FLAG.PADDED | FLAG.PRIORITY, 3, payload),
      frame(FRAME.CONTINUATION, 0, 3, b.subarray(10, 50)),
      frame(FRAME.CONTINUATION, 0, 3, Buffer.alloc(0)),
      frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 3, b.subarray(50)),
    ]);
    const r = peekH2c(buf, MAX);
    expect([r?.streamId, r?.length, r?.headers]).toEqual([3, buf.length, [['x-long', 'v'.repeat(300)]]]);
  });

  it('needs more bytes at every proper prefix, and gives the same answer for every split', () => {
    const buf = request([...REQ, ['x-a', '1']], true);
    const whole = peekH2c(buf, MAX);
    for (let i = 0; i < buf.length; i++) expect(peekH2c(buf.subarray(0, i), MAX)).toBeUndefined();
    for (let i = 1; i < buf.length; i++) expect(feed(buf, [i])).toEqual(whole);
  });
});

function loadCapture(name: string): { bytes: Buffer; port: number } {
  const json = JSON.parse(readFileSync(new URL(`../fixtures/h2/${name}.json`, import.meta.url), 'utf8'));
  return { bytes: Buffer.from(json.hex, 'hex'), port: json.port };
}

/** The assertions every capture must pass: peek, splits, and every block through one decoder. */
function checkCapture(c: ClientCase, bytes: Buffer, port: number): void {
  const expected = c.expect(port);
  const first = expected[0]!;
  const head = peekH2c(bytes, MAX);
  expect(head).toMatchObject({
    method: first.method,
    path: first.path,
    authority: first.authority,
    host: first.host,
    port,
  });
  expect(head?.headers).toEqual(expect.arrayContaining(first.headers.map((h) => [...h])));
  // Whole, one byte at a time, and split at every offset.
  expect(feed(bytes, [...Array(bytes.length).keys()])).toEqual(head);
  for (let i = 1; i < bytes.length; i++) expect(feed(bytes, [i])).toEqual(head);
  // Every block in order through one decoder: later blocks reference the dynamic table.
  const decoder = new HpackDecoder();
  const blocks = headerBlocks(bytes);
  expect(blocks.length).toBeGreaterThanOrEqual(expected.length);
  expected.forEach((want, i) => {
    const fields = decoder.decode(blocks[i]!.block, MAX);
    expect(fields).toEqual(
      expect.arrayContaining([[':path', want.path], [':authority', want.authority], ...want.headers]),
    );
  });
}

describe.each(CLIENT_CASES)('real traffic: $name', (c) => {
  it('stored capture (test/fixtures/h2)', () => {
    const { bytes, port } = loadCapture(c.name);
    checkCapture(c, bytes, port);
    if (c.name === 'node') {
      // The second block is short because it indexes the first block's literals.
      const [one, two] = headerBlocks(bytes);
      expect(two!.block.length).toBeLessThan(one!.block.length / 2);
    }
  });

  const installed = c.tool === undefined || hasTool(c.tool);
  it.skipIf(!installed)(`live capture${installed ? '' : ` (skipped: ${c.tool} is not installed)`}`, async () => {
    const { bytes, port } = await capture(c.client, c.expect(0).length);
    checkCapture(c, bytes, port);
  });
});

const continuation = (n: number, stream = 1) =>
  Array.from({ length: n }, () => frame(FRAME.CONTINUATION, 0, stream, Buffer.alloc(0)));

const ERRORS: [string, () => Buffer, number, RegExp][] = [
  [
    'bad preface (RFC 9113 §3.4)',
    () => Buffer.from('PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n', 'latin1'),
    H2_ERROR.PROTOCOL_ERROR,
    /bad connection preface at byte 18/,
  ],
  [
    'first frame not SETTINGS (RFC 9113 §3.4)',
    () => Buffer.concat([H2_PREFACE, headers(block(REQ))]),
    H2_ERROR.PROTOCOL_ERROR,
    /first frame is type 1/,
  ],
  [
    'SETTINGS length not a multiple of 6 (RFC 9113 §6.5)',
    () => Buffer.concat([H2_PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(5))]),
    H2_ERROR.FRAME_SIZE_ERROR,
    /not a multiple of 6/,
  ],
  [
    'SETTINGS on a stream (RFC 9113 §6.5)',
    () => Buffer.concat([H2_PREFACE, frame(FRAME.SETTINGS, 0, 1)]),
    H2_ERROR.PROTOCOL_ERROR,
    /settings on stream 1/,
  ],
  [
    'first SETTINGS is an ACK',
    () => Buffer.concat([H2_PREFACE, frame(FRAME.SETTINGS, FLAG.ACK, 0)]),
    H2_ERROR.PROTOCOL_ERROR,
    /first settings is an ack/,
  ],
  [
    'SETTINGS_ENABLE_PUSH = 2 (RFC 9113 §6.5.2)',
    () => Buffer.concat([H2_PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 2, 0, 0, 0, 2]))]),
    H2_ERROR.PROTOCOL_ERROR,
    /enable_push 2/,
  ],
  [
    'SETTINGS_INITIAL_WINDOW_SIZE > 2^31-1 (RFC 9113 §6.5.2)',
    () => Buffer.concat([H2_PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 4, 0x80, 0, 0, 0]))]),
    H2_ERROR.FLOW_CONTROL_ERROR,
    /initial_window_size/,
  ],
  [
    'SETTINGS_MAX_FRAME_SIZE < 16384 (RFC 9113 §6.5.2)',
    () => Buffer.concat([H2_PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 5, 0, 0, 0x10, 0]))]),
    H2_ERROR.PROTOCOL_ERROR,
    /max_frame_size 4096/,
  ],
  [
    'frame larger than 16384 (RFC 9113 §4.2)',
    () => Buffer.concat([prelude(), frame(0xfa, 0, 0, Buffer.alloc(16385))]),
    H2_ERROR.FRAME_SIZE_ERROR,
    /type 250 .* 16385 bytes/,
  ],
  [
    'HEADERS larger than 16384 (RFC 9113 §4.2)',
    () => Buffer.concat([prelude(), frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, Buffer.alloc(16385))]),
    H2_ERROR.FRAME_SIZE_ERROR,
    /type 1 .* 16385 bytes/,
  ],
  [
    'PING of 7 bytes (RFC 9113 §6.7)',
    () => Buffer.concat([prelude(), frame(FRAME.PING, 0, 0, Buffer.alloc(7))]),
    H2_ERROR.FRAME_SIZE_ERROR,
    /ping length 7/,
  ],
  [
    'WINDOW_UPDATE of 0 (RFC 9113 §6.9)',
    () => Buffer.concat([prelude(), frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.alloc(4))]),
    H2_ERROR.PROTOCOL_ERROR,
    /window_update of 0/,
  ],
  [
    'WINDOW_UPDATE on an idle stream (RFC 9113 §5.1)',
    () => Buffer.concat([prelude(), frame(FRAME.WINDOW_UPDATE, 0, 1, Buffer.from([0, 0, 1, 0]))]),
    H2_ERROR.PROTOCOL_ERROR,
    /idle stream 1/,
  ],
  [
    'PRIORITY on stream 0 (RFC 9113 §6.3)',
    () => Buffer.concat([prelude(), frame(FRAME.PRIORITY, 0, 0, Buffer.alloc(5))]),
    H2_ERROR.PROTOCOL_ERROR,
    /priority on stream 0/,
  ],
  [
    'PRIORITY depending on itself (RFC 9113 §5.3.1)',
    () => Buffer.concat([prelude(), frame(FRAME.PRIORITY, 0, 3, Buffer.from([0, 0, 0, 3, 1]))]),
    H2_ERROR.PROTOCOL_ERROR,
    /stream 3 depends on itself/,
  ],
  [
    'DATA before HEADERS (RFC 9113 §5.1)',
    () => Buffer.concat([prelude(), frame(FRAME.DATA, 0, 1, Buffer.from('x'))]),
    H2_ERROR.PROTOCOL_ERROR,
    /unexpected frame type 0/,
  ],
  [
    'CONTINUATION without HEADERS (RFC 9113 §6.10)',
    () => Buffer.concat([prelude(), frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 1)]),
    H2_ERROR.PROTOCOL_ERROR,
    /unexpected frame type 9/,
  ],
  [
    'HEADERS on stream 0 (RFC 9113 §6.2)',
    () => Buffer.concat([prelude(), headers(block(REQ), 0)]),
    H2_ERROR.PROTOCOL_ERROR,
    /headers on stream 0/,
  ],
  [
    'HEADERS on an even stream (RFC 9113 §5.1.1)',
    () => Buffer.concat([prelude(), headers(block(REQ), 2)]),
    H2_ERROR.PROTOCOL_ERROR,
    /even stream 2/,
  ],
  [
    'padding as long as the payload (RFC 9113 §6.2)',
    () =>
      Buffer.concat([prelude(), frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.PADDED, 1, Buffer.from([3, 0x82, 0x86]))]),
    H2_ERROR.PROTOCOL_ERROR,
    /padding of 3 exceeds/,
  ],
  [
    'HEADERS depending on itself (RFC 9113 §5.3.1)',
    () =>
      Buffer.concat([
        prelude(),
        frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.PRIORITY, 1, Buffer.from([0, 0, 0, 1, 0, 0x82])),
      ]),
    H2_ERROR.PROTOCOL_ERROR,
    /stream depends on itself/,
  ],
  [
    'PING between HEADERS and CONTINUATION (RFC 9113 §6.10)',
    () => Buffer.concat([prelude(), frame(FRAME.HEADERS, 0, 1, block(REQ)), frame(FRAME.PING, 0, 0, Buffer.alloc(8))]),
    H2_ERROR.PROTOCOL_ERROR,
    /frame type 6 .* interrupts/,
  ],
  [
    'CONTINUATION on another stream (RFC 9113 §6.10)',
    () =>
      Buffer.concat([
        prelude(),
        frame(FRAME.HEADERS, 0, 1, block(REQ)),
        frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 3),
      ]),
    H2_ERROR.PROTOCOL_ERROR,
    /frame type 9 on stream 3 .* interrupts/,
  ],
  [
    'CONTINUATION flood: 33 empty frames (RFC 9113 §10.5.1, VU#421644)',
    () => Buffer.concat([prelude(), frame(FRAME.HEADERS, 0, 1, block(REQ)), ...continuation(33)]),
    H2_ERROR.ENHANCE_YOUR_CALM,
    /more than 32 continuation/,
  ],
  [
    'more than 32 frames before HEADERS',
    () => Buffer.concat([prelude(), ...Array.from({ length: 40 }, () => frame(FRAME.PING, 0, 0, Buffer.alloc(8)))]),
    H2_ERROR.ENHANCE_YOUR_CALM,
    /more than 32 frames before/,
  ],
  [
    'bad Huffman padding in :path (RFC 7541 §5.2)',
    () => Buffer.concat([prelude(), headers(Buffer.from([0x82, 0x86, 0x04, 0x81, 0x18]))]),
    H2_ERROR.COMPRESSION_ERROR,
    /stream 1: hpack: byte 3: literal value: huffman: padding/,
  ],
  [
    'table size update above 4096 (RFC 7541 §6.3)',
    () => Buffer.concat([prelude(), headers(Buffer.from([...integer(8192, 5, 0x20), ...block(REQ)]))]),
    H2_ERROR.COMPRESSION_ERROR,
    /stream 1: hpack: byte 0: table size update to 8192/,
  ],
];

const MALFORMED: [string, [string, string][]][] = [
  ['upper-case field name (RFC 9113 §8.2.1)', [...REQ, ['X-Custom', '1']]],
  ['empty field name (RFC 9113 §8.2.1)', [...REQ, ['', '1']]],
  ['space in a field name (RFC 9113 §8.2.1)', [...REQ, ['x y', '1']]],
  ['CR in a value (RFC 9113 §8.2.1)', [...REQ, ['x', 'a\rb']]],
  ['leading space in a value (RFC 9113 §8.2.1)', [...REQ, ['x', ' a']]],
  ['connection (RFC 9113 §8.2.2)', [...REQ, ['connection', 'close']]],
  ['transfer-encoding (RFC 9113 §8.2.2)', [...REQ, ['transfer-encoding', 'chunked']]],
  ['keep-alive (RFC 9113 §8.2.2)', [...REQ, ['keep-alive', '5']]],
  ['upgrade (RFC 9113 §8.2.2)', [...REQ, ['upgrade', 'websocket']]],
  ['te: gzip (RFC 9113 §8.2.2)', [...REQ, ['te', 'gzip']]],
  ['pseudo-header after a regular field (RFC 9113 §8.3)', [...REQ.slice(0, 3), ['x', '1'], REQ[3]!]],
  ['duplicate :path (RFC 9113 §8.3.1)', [...REQ, [':path', '/again']]],
  [':protocol before SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 §4)', [...REQ, [':protocol', 'websocket']]],
  [':status in a request (RFC 9113 §8.3)', [...REQ, [':status', '200']]],
  ['missing :method (RFC 9113 §8.3.1)', REQ.slice(1)],
  ['missing :scheme (RFC 9113 §8.3.1)', [REQ[0]!, ...REQ.slice(2)]],
  ['missing :path (RFC 9113 §8.3.1)', [REQ[0]!, REQ[1]!, REQ[3]!]],
  ['empty :path (RFC 9113 §8.3.1)', [REQ[0]!, REQ[1]!, [':path', ''], REQ[3]!]],
  [':path not origin-form (RFC 9113 §8.3.1)', [REQ[0]!, REQ[1]!, [':path', 'x/y'], REQ[3]!]],
  [':path * without OPTIONS (RFC 9113 §8.3.1)', [REQ[0]!, REQ[1]!, [':path', '*'], REQ[3]!]],
  ['space in :path', [REQ[0]!, REQ[1]!, [':path', '/a b'], REQ[3]!]],
  [
    'CONNECT with :path (RFC 9113 §8.5)',
    [
      [':method', 'CONNECT'],
      [':authority', 'a:1'],
      [':path', '/'],
    ],
  ],
  ['no :authority and no host (RFC 9113 §8.3.1)', REQ.slice(0, 3)],
  [':authority and host disagree (RFC 9113 §8.3.1)', [...REQ, ['host', 'other.test:8080']]],
  ['two host fields', [...REQ.slice(0, 3), ['host', 'a.test'], ['host', 'a.test']]],
  ['userinfo in :authority (RFC 9113 §8.3.1)', [...REQ.slice(0, 3), [':authority', 'user@a.test']]],
  ['port out of range', [...REQ.slice(0, 3), [':authority', 'a.test:65536']]],
];

describe('refusals carry an HTTP/2 error code', () => {
  it.each(ERRORS)('%s', (_why, make, h2Code, why) => {
    const buf = make();
    const err = peekError(buf);
    expect(err).toBeInstanceOf(SwitchboardError);
    expect([err.code, err.h2Code]).toEqual(['SWB_ERR_H2', h2Code]);
    expect(err.message).toMatch(/^h2c: [a-z]/);
    expect(err.message).toMatch(why);
    // The same refusal whatever the split.
    for (let i = 1; i < buf.length; i += Math.max(1, buf.length >> 6)) expect(feed(buf, [i])).toEqual(err);
  });

  it.each(MALFORMED)('malformed request: %s → PROTOCOL_ERROR', (_why, fields) => {
    const err = peekError(request(fields));
    expect(err.h2Code).toBe(H2_ERROR.PROTOCOL_ERROR);
    expect(err.message).toMatch(/^h2c: stream 1: malformed request: /);
  });

  it.each([
    [
      'OPTIONS *',
      [
        [':method', 'OPTIONS'],
        [':scheme', 'http'],
        [':path', '*'],
        [':authority', 'a.test'],
      ],
    ],
    ['te: trailers', [...REQ, ['te', 'trailers']]],
    ['matching :authority and host', [...REQ, ['host', 'www.example.test:8080']]],
    [
      'non-http scheme without authority',
      [
        [':method', 'GET'],
        [':scheme', 'urn'],
        [':path', 'isbn:1'],
      ],
    ],
  ] as [string, [string, string][]][])('accepts %s', (_why, fields) => {
    expect(peekH2c(request(fields), MAX)?.method).toBe(fields[0]![1]);
  });

  it('bounds the header block and the decoded list by maxHeaderBytes → header_too_large', () => {
    const big = request([...REQ, ['x-big', 'v'.repeat(2000)]]);
    expect(peekH2c(big, 4096)?.headers).toEqual([['x-big', 'v'.repeat(2000)]]);
    const tooBig = peekError(big, 1000);
    expect([tooBig.h2Code, tooBig.result]).toEqual([H2_ERROR.ENHANCE_YOUR_CALM, 'header_too_large']);
    const b = block([...REQ, ['x-big', 'v'.repeat(2000)]]);
    const split = Buffer.concat([
      prelude(),
      frame(FRAME.HEADERS, 0, 1, b.subarray(0, 900)),
      frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 1, b.subarray(900)),
    ]);
    expect(peekError(split, 1000).message).toMatch(/header block exceeds 1000 bytes/);
  });
});

describe('goawayFrame (RFC 9113 §6.8)', () => {
  it('is an empty SETTINGS then GOAWAY(last stream, code)', () => {
    expect(goawayFrame(H2_ERROR.PROTOCOL_ERROR, 5).toString('hex')).toBe(
      `000000040000000000` + `0000080700000000000000000500000001`,
    );
  });

  it('is understood by a real client (node:http2 reports the code)', async () => {
    const server = net.createServer((s) => {
      s.on('error', () => {});
      s.once('data', () => s.end(goawayFrame(H2_ERROR.ENHANCE_YOUR_CALM)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const client = http2.connect(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
      client.on('error', () => {});
      const code = new Promise<number>((resolve) => client.on('goaway', (errorCode) => resolve(errorCode)));
      client.request({ ':path': '/' }).on('error', () => {});
      expect(await code).toBe(H2_ERROR.ENHANCE_YOUR_CALM);
      client.destroy();
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('properties (fast-check)', () => {
  const frameArb = fc
    .tuple(
      fc.integer({ min: 0, max: 12 }),
      fc.integer({ min: 0, max: 255 }),
      fc.integer({ min: 0, max: 7 }),
      fc.uint8Array({ maxLength: 24 }),
    )
    .map(([type, flags, stream, payload]) => frame(type, flags, stream, payload));
  const fieldArb = fc.tuple(fc.constantFrom('x-a', 'host', ':path', 'te', 'X', ''), fc.string({ maxLength: 6 }));

  it('never throws anything but H2PeekError, on random frames and random blocks', () => {
    fc.assert(
      fc.property(
        fc.array(frameArb, { maxLength: 6 }),
        fc.array(fieldArb, { maxLength: 4 }),
        fc.boolean(),
        (frames, extra, huff) => {
          for (const buf of [Buffer.concat([prelude(), ...frames]), request([...REQ, ...extra], huff)]) {
            try {
              peekH2c(buf, MAX);
            } catch (e) {
              if (!(e instanceof H2PeekError)) throw e;
            }
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('gives the same result for any split', () => {
    const bufArb = fc.oneof(
      fc.array(frameArb, { maxLength: 5 }).map((frames) => Buffer.concat([prelude(), ...frames, headers(block(REQ))])),
      fc.array(fieldArb, { maxLength: 4 }).map((extra) => request([...REQ, ...extra], true)),
    );
    fc.assert(
      fc.property(bufArb, fc.array(fc.nat(), { maxLength: 6 }), (buf, cuts) => {
        expect(
          feed(
            buf,
            cuts.map((c) => c % (buf.length + 1)),
          ),
        ).toEqual(feed(buf, []));
      }),
      { numRuns: 500 },
    );
  });

  it('decodes what a Huffman encoder produced for any header value', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[!-~]([ -~]*[!-~])?$/), (value) => {
        const b = Buffer.from([
          ...block(REQ),
          0x00,
          ...str('x-v', true),
          ...integer(huffmanEncode(Buffer.from(value, 'latin1')).length, 7, 0x80),
          ...huffmanEncode(Buffer.from(value, 'latin1')),
        ]);
        expect(peekH2c(Buffer.concat([prelude(), headers(b)]), MAX)?.headers).toEqual([['x-v', value]]);
      }),
    );
  });
});
