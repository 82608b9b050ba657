import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../src/base/errors.ts';
import { H2_ERROR, H2PeekError } from '../../src/peek/h2-frames.ts';
import { HpackDecoder } from '../../src/peek/hpack.ts';
import { HUFFMAN_CODES, HUFFMAN_LENGTHS, huffmanDecode } from '../../src/peek/hpack-huffman.ts';
import { STATIC_TABLE } from '../../src/peek/hpack-static.ts';
import { huffmanEncode, integer, str } from '../fixtures/h2/build.ts';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const BIG = 1 << 20;

describe('huffman code table (RFC 7541 Appendix B)', () => {
  it('is the canonical code of its lengths: codes and lengths agree row by row', () => {
    const order = [...Array(257).keys()].sort((a, b) => HUFFMAN_LENGTHS[a]! - HUFFMAN_LENGTHS[b]! || a - b);
    let code = 0;
    let len = HUFFMAN_LENGTHS[order[0]!]!;
    for (const sym of order) {
      code *= 2 ** (HUFFMAN_LENGTHS[sym]! - len);
      len = HUFFMAN_LENGTHS[sym]!;
      expect([sym, HUFFMAN_CODES[sym]]).toEqual([sym, code]);
      code++;
    }
    // A complete prefix code: the last 30-bit code (EOS) is all ones, so the Kraft sum is 1.
    expect(code).toBe(2 ** 30);
  });

  it.each([
    ['/', 0x18, 6], // Appendix B row 47, the §B example
    ['0', 0x0, 5],
    ['z', 0x7b, 7],
    ['\\', 0x7fff0, 19],
  ])('row %j = %i on %i bits', (ch, code, len) => {
    const sym = ch.charCodeAt(0);
    expect([HUFFMAN_CODES[sym], HUFFMAN_LENGTHS[sym]]).toEqual([code, len]);
  });
  it('EOS (256) is 30 ones', () => expect([HUFFMAN_CODES[256], HUFFMAN_LENGTHS[256]]).toEqual([0x3fffffff, 30]));

  it('decodes the C.4.1 literal', () => {
    const b = hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff');
    expect(huffmanDecode(b, 0, b.length, 'test')).toBe('www.example.com');
  });

  it('round-trips every octet string (fast-check)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const enc = huffmanEncode(bytes);
        expect(Buffer.from(huffmanDecode(enc, 0, enc.length, 't'), 'latin1')).toEqual(Buffer.from(bytes));
      }),
    );
  });

  it.each([
    [
      'padding of 8 one bits (RFC 7541 §5.2: longer than 7 bits)',
      Buffer.from([...huffmanEncode(Buffer.from('a')), 0xff]),
    ],
    ['"&" (8 bits) then exactly 8 one bits of padding (RFC 7541 §5.2)', Buffer.from([0xf8, 0xff])],
    ['an empty string padded with 8 one bits (RFC 7541 §5.2)', Buffer.from([0xff])],
    ['padding not all ones: "a" + 000 (RFC 7541 §5.2)', Buffer.from([0b00011000])],
    ['a whole EOS symbol (RFC 7541 §5.2)', Buffer.from([0xff, 0xff, 0xff, 0xff])],
    ['EOS after "a" (RFC 7541 §5.2)', Buffer.from([0b00011111, 0xff, 0xff, 0xff, 0xff])],
    ['a code cut inside a long symbol (RFC 7541 §5.2)', Buffer.from([0xff, 0xfe])],
  ])('rejects %s', (_why, bytes) => {
    const err = catchError(() => huffmanDecode(bytes, 0, bytes.length, 'test'));
    expect(err).toBeInstanceOf(H2PeekError);
    expect((err as H2PeekError).h2Code).toBe(H2_ERROR.COMPRESSION_ERROR);
    expect((err as H2PeekError).code).toBe('SWB_ERR_H2');
  });
});

function catchError(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('static table (RFC 7541 Appendix A)', () => {
  it.each([
    [1, ':authority', ''],
    [2, ':method', 'GET'],
    [7, ':scheme', 'https'],
    [16, 'accept-encoding', 'gzip, deflate'],
    [38, 'host', ''],
    [61, 'www-authenticate', ''],
  ])('entry %i is %s: %j', (i, name, value) => {
    expect(STATIC_TABLE.length).toBe(61);
    expect(new HpackDecoder().decode(Buffer.from(integer(i, 7, 0x80)), BIG)).toEqual([[name, value]]);
  });
});

type Step = { block: string; fields: [string, string][]; table: [string, string][]; size: number };

const C3: Step[] = [
  {
    block: '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
    fields: [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
    ],
    table: [[':authority', 'www.example.com']],
    size: 57,
  },
  {
    block: '8286 84be 5808 6e6f 2d63 6163 6865',
    fields: [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
      ['cache-control', 'no-cache'],
    ],
    table: [
      ['cache-control', 'no-cache'],
      [':authority', 'www.example.com'],
    ],
    size: 110,
  },
  {
    block: '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
    fields: [
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/index.html'],
      [':authority', 'www.example.com'],
      ['custom-key', 'custom-value'],
    ],
    table: [
      ['custom-key', 'custom-value'],
      ['cache-control', 'no-cache'],
      [':authority', 'www.example.com'],
    ],
    size: 164,
  },
];
const C4_BLOCKS = [
  '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
  '8286 84be 5886 a8eb 1064 9cbf',
  '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
];

const DATE1 = 'Mon, 21 Oct 2013 20:13:21 GMT';
const DATE2 = 'Mon, 21 Oct 2013 20:13:22 GMT';
const LOC = 'https://www.example.com';
const COOKIE = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';
const C5: Step[] = [
  {
    block:
      '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
    fields: [
      [':status', '302'],
      ['cache-control', 'private'],
      ['date', DATE1],
      ['location', LOC],
    ],
    table: [
      ['location', LOC],
      ['date', DATE1],
      ['cache-control', 'private'],
      [':status', '302'],
    ],
    size: 222,
  },
  {
    block: '4803 3330 37c1 c0bf',
    fields: [
      [':status', '307'],
      ['cache-control', 'private'],
      ['date', DATE1],
      ['location', LOC],
    ],
    table: [
      [':status', '307'],
      ['location', LOC],
      ['date', DATE1],
      ['cache-control', 'private'],
    ],
    size: 222,
  },
  {
    block:
      '88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31',
    fields: [
      [':status', '200'],
      ['cache-control', 'private'],
      ['date', DATE2],
      ['location', LOC],
      ['content-encoding', 'gzip'],
      ['set-cookie', COOKIE],
    ],
    table: [
      ['set-cookie', COOKIE],
      ['content-encoding', 'gzip'],
      ['date', DATE2],
    ],
    size: 215,
  },
];
const C6_BLOCKS = [
  '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
  '4883 640e ffc1 c0bf',
  '88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07',
];

function runSequence(steps: Step[], blocks: string[], tableSize: number): void {
  const d = new HpackDecoder(tableSize);
  steps.forEach((step, i) => {
    expect(d.decode(hex(blocks[i]!), BIG)).toEqual(step.fields);
    expect(d.dynamicEntries()).toEqual(step.table);
    expect(d.tableSize).toBe(step.size);
  });
}

describe('RFC 7541 Appendix C examples', () => {
  it.each([
    [
      'C.2.1 literal with indexing',
      '400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572',
      [['custom-key', 'custom-header']],
      [['custom-key', 'custom-header']],
      55,
    ],
    ['C.2.2 literal without indexing', '040c 2f73 616d 706c 652f 7061 7468', [[':path', '/sample/path']], [], 0],
    ['C.2.3 literal never indexed', '1008 7061 7373 776f 7264 0673 6563 7265 74', [['password', 'secret']], [], 0],
    ['C.2.4 indexed', '82', [[':method', 'GET']], [], 0],
  ] as const)('%s', (_name, block, fields, table, size) => {
    const d = new HpackDecoder();
    expect(d.decode(hex(block), BIG)).toEqual(fields);
    expect(d.dynamicEntries()).toEqual(table);
    expect(d.tableSize).toBe(size);
  });

  it('C.3 requests without Huffman, table after each', () =>
    runSequence(
      C3,
      C3.map((s) => s.block),
      4096,
    ));
  it('C.4 requests with Huffman, table after each', () => runSequence(C3, C4_BLOCKS, 4096));
  it('C.5 responses without Huffman, table of 256 with evictions', () =>
    runSequence(
      C5,
      C5.map((s) => s.block),
      256,
    ));
  it('C.6 responses with Huffman, table of 256 with evictions', () => runSequence(C5, C6_BLOCKS, 256));

  it('C.1.2 integer 1337 on a 5-bit prefix (as a table size update)', () => {
    const d = new HpackDecoder(2000);
    expect(d.decode(hex('3f9a0a'), BIG)).toEqual([]);
    expect(d.tableCapacity).toBe(1337);
  });
});

describe('dynamic table', () => {
  const entry = (name: string, value: string) => [0x40, ...str(name), ...str(value)];

  it('references an entry inserted earlier in the same block (index 62 = newest)', () => {
    const b = Buffer.from([...entry('x-a', '1'), ...entry('x-b', '2'), 0x80 | 62, 0x80 | 63]);
    expect(new HpackDecoder().decode(b, BIG)).toEqual([
      ['x-a', '1'],
      ['x-b', '2'],
      ['x-b', '2'],
      ['x-a', '1'],
    ]);
  });

  it('an entry larger than the table empties it (RFC 7541 §4.4)', () => {
    const d = new HpackDecoder(100);
    d.decode(Buffer.from(entry('x-a', '1')), BIG);
    d.decode(Buffer.from(entry('x-big', 'v'.repeat(80))), BIG);
    expect(d.dynamicEntries()).toEqual([]);
    expect(d.tableSize).toBe(0);
  });

  it('a size update evicts, then the table grows back only up to the new size (RFC 7541 §4.3)', () => {
    const d = new HpackDecoder();
    d.decode(Buffer.from([...entry('x-a', '1'), ...entry('x-b', '2')]), BIG);
    d.decode(Buffer.from([...integer(40, 5, 0x20)]), BIG);
    expect(d.dynamicEntries()).toEqual([['x-b', '2']]);
    d.decode(Buffer.from([0x20, ...integer(4096, 5, 0x20)]), BIG); // two updates at the start: legal
    expect(d.tableCapacity).toBe(4096);
  });

  it('keeps wrapping the ring past its slot count', () => {
    const d = new HpackDecoder(64 * 3);
    for (let i = 0; i < 300; i++) d.decode(Buffer.from(entry('k', String(i % 10).repeat(31))), BIG);
    expect(d.dynamicEntries().map(([, v]) => v[0])).toEqual(['9', '8', '7']);
    expect(d.tableSize).toBe(192);
  });
});

describe('malformed blocks → COMPRESSION_ERROR (RFC 9113 §4.3)', () => {
  it.each([
    ['indexed 0 (RFC 7541 §6.1)', [0x80]],
    ['index beyond static + dynamic (RFC 7541 §2.3.3)', [0x80 | 62]],
    ['literal name index beyond the table', [0x40 | 63, 0x01, 0x61]],
    ['size update above 4096 (RFC 7541 §6.3)', integer(4097, 5, 0x20)],
    ['size update after a field (RFC 7541 §4.2)', [0x82, 0x20]],
    ['truncated integer (RFC 7541 §5.1)', [0xff, 0x80]],
    ['integer with too many continuation bytes', [0xff, 0x80, 0x80, 0x80, 0x80, 0x01]],
    ['string longer than the block (RFC 7541 §5.2)', [0x00, 0x05, 0x61]],
    ['missing value string', [0x00, 0x01, 0x61]],
    ['huffman value with EOS (RFC 7541 §5.2)', [0x04, 0x84, 0xff, 0xff, 0xff, 0xff]],
    ['huffman value with zero padding (RFC 7541 §5.2)', [0x04, 0x81, 0x18]],
  ])('%s', (_why, bytes) => {
    const err = catchError(() => new HpackDecoder().decode(Buffer.from(bytes), BIG));
    expect(err).toBeInstanceOf(H2PeekError);
    expect((err as H2PeekError).h2Code).toBe(H2_ERROR.COMPRESSION_ERROR);
    expect((err as Error).message).toMatch(/^hpack: byte \d+: /);
  });

  it('a decoded list above the limit → ENHANCE_YOUR_CALM, header_too_large (RFC 7541 §7.3)', () => {
    // One small entry referenced 100 times: 3 bytes of block, 100 × (32 + 4) bytes of list.
    const b = Buffer.from([0x40, ...str('x'), ...str('yyy'), ...Array(100).fill(0x80 | 62)]);
    const err = catchError(() => new HpackDecoder().decode(b, 1000)) as H2PeekError;
    expect([err.h2Code, err.result]).toEqual([H2_ERROR.ENHANCE_YOUR_CALM, 'header_too_large']);
    expect(new HpackDecoder().decode(b, 101 * 36)).toHaveLength(101);
  });

  it('never throws anything but SwitchboardError (fast-check)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ maxLength: 64 }), (a, b) => {
        const d = new HpackDecoder();
        for (const block of [a, b]) {
          try {
            d.decode(block, 4096);
          } catch (e) {
            if (!(e instanceof SwitchboardError) || e.code !== 'SWB_ERR_H2') throw e;
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});
