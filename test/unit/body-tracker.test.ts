/** BodyTracker: where a message body ends, fed whole and byte by byte (RFC 9112 §6, §7.1). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { BodyTracker, releaseTracker, takeTracker } from '../../src/peek/body-tracker.ts';
import type { BodyFraming } from '../../src/peek/http1-fields.ts';

const b = (s: string) => Buffer.from(s, 'latin1');
const CHUNKED: BodyFraming = { kind: 'chunked' };

/** Feeds `input` in pieces of `step`; returns the body length found, or -1 when not done. */
function bodyLength(framing: BodyFraming, input: Buffer, step: number): number {
  const t = new BodyTracker(framing);
  let total = 0;
  for (let i = 0; i < input.length && !t.done; i += step) {
    const piece = input.subarray(0, Math.min(i + step, input.length));
    // Feed the new bytes with an offset into the shared buffer, as a panel would.
    const n = t.feed(piece, i);
    total += n;
    if (!t.done) expect(n).toBe(piece.length - i);
  }
  return t.done ? total : -1;
}

/** The error code thrown while tracking, or 'ok'. */
function codeOf(framing: BodyFraming, input: Buffer, step: number): string {
  try {
    bodyLength(framing, input, step);
    return 'ok';
  } catch (e) {
    if (isSwitchboardError(e)) return e.code;
    throw e;
  }
}

// [name, chunked body, bytes of the next message, source]
const good: [string, string, string, string][] = [
  ['one chunk', '5\r\nhello\r\n0\r\n\r\n', 'NEXT', 'RFC 9112 §7.1'],
  ['two chunks, hex upper/lower', 'A\r\n0123456789\r\nb\r\n0123456789a\r\n0\r\n\r\n', 'GET', 'RFC 9112 §7.1'],
  ['leading zeros', '0005\r\nhello\r\n000\r\n\r\n', '', 'RFC 9112 §7.1 (1*HEXDIG)'],
  ['extensions', '5;name=value;flag\r\nhello\r\n0;last="q v"\r\n\r\n', 'X', 'RFC 9112 §7.1.1'],
  ['extension with BWS after ;', '5; a = 1\r\nhello\r\n0\r\n\r\n', '', 'RFC 9112 §7.1.1 BWS'],
  ['trailers', '5\r\nhello\r\n0\r\nX-Sum: abc\r\nX-Other:  d \r\n\r\n', 'NEXT', 'RFC 9112 §7.1.2'],
  ['empty body', '0\r\n\r\n', '0\r\n\r\n', 'RFC 9112 §7.1'],
  ['16 hex digits', '0000000000000003\r\nabc\r\n0\r\n\r\n', '', '#12 (≤ 16 digits)'],
];

// [name, body, source]
const bad: [string, string, string][] = [
  ['0x prefix', '0x10\r\n', '#12 RFC 9112 §7.1'],
  ['underscore', '1_0\r\n', '#12'],
  ['plus sign', '+5\r\nhello\r\n', '#12'],
  ['17 hex digits', '00000000000000005\r\nhello\r\n', '#12 (bounded size)'],
  ['40 hex digits', `${'f'.repeat(40)}\r\n`, '#12'],
  ['size above 2^53', 'fffffffffffffff\r\n', '#12 (JS precision guard)'],
  ['empty size', '\r\nhello\r\n', '#12 RFC 9112 §7.1'],
  ['CR inside extension', '2\r\r;a\r\nab\r\n0\r\n\r\n', '#12 RFC 9112 §7.1.1'],
  ['bare LF after size', '5\nhello\r\n0\r\n\r\n', '#6/#12 RFC 9112 §7.1'],
  ['space before extension', '5 ;a\r\nhello\r\n0\r\n\r\n', '#12 (our choice: no BWS before ;)'],
  ['space after size', '5 \r\nhello\r\n0\r\n\r\n', '#12'],
  ['NUL in extension', '5;a\x00\r\nhello\r\n0\r\n\r\n', '#12 RFC 9112 §7.1.1'],
  ['data not followed by CRLF', '5\r\nhelloXX0\r\n\r\n', '#12 RFC 9112 §7.1'],
  ['data followed by bare LF', '5\r\nhello\n0\r\n\r\n', '#6/#12 RFC 9112 §7.1'],
  ['trailer bare LF', '0\r\nX: a\n\r\n', '#6 RFC 9112 §7.1.2'],
  ['trailer bare CR', '0\r\nX: a\rb\r\n\r\n', '#6 RFC 9112 §7.1.2'],
  ['trailer obs-fold', '0\r\nX: a\r\n b\r\n\r\n', '#5 RFC 9112 §5.2'],
  ['trailer Content-Length', '0\r\nContent-Length: 5\r\n\r\n', '#12 RFC 9110 §6.5.1'],
  ['trailer Transfer-Encoding', '0\r\nTransfer-Encoding: chunked\r\n\r\n', '#12 RFC 9110 §6.5.1'],
  ['trailer whitespace before colon', '0\r\nX : a\r\n\r\n', '#7 RFC 9112 §5.1'],
  ['extension line too long', `5;${'a'.repeat(5000)}\r\nhello\r\n`, '#12 (bounded extensions)'],
  ['trailer line too long', `0\r\nX: ${'a'.repeat(5000)}\r\n\r\n`, '#12 (bounded trailers)'],
  ['trailers too large', `0\r\n${'X: aaaaaaaaaa\r\n'.repeat(2000)}\r\n`, '#12 (bounded trailers)'],
];

describe('BodyTracker: chunked', () => {
  it.each(good)('%s', (_name, body, next) => {
    const input = b(body + next);
    for (const step of [1, 3, 7, 1000]) expect(bodyLength(CHUNKED, input, step)).toBe(b(body).length);
  });

  it.each(bad)('rejects %s (%s)', (_name, input) => {
    for (const step of [1, 7, 100000]) expect(codeOf(CHUNKED, b(input), step)).toBe('SWB_ERR_BAD_REQUEST');
  });

  it('is not done before the final CRLF, at any prefix', () => {
    const input = b('3\r\nabc\r\n0;e=1\r\nT: v\r\n\r\n');
    for (let n = 0; n < input.length; n++) expect(bodyLength(CHUNKED, input.subarray(0, n), 1)).toBe(-1);
    expect(bodyLength(CHUNKED, input, 1)).toBe(input.length);
  });

  it('does not look inside chunk data', () => {
    const data = '\r\n0\r\n\r\nGET / HTTP/1.1\r\n';
    const input = b(`${data.length.toString(16)}\r\n${data}\r\n0\r\n\r\n`);
    expect(bodyLength(CHUNKED, input, 1)).toBe(input.length);
  });

  it('finds the same end for random chunkings and random splits', () => {
    const chunks = fc.array(fc.string({ unit: 'binary-ascii', maxLength: 40 }), { maxLength: 6 });
    fc.assert(
      fc.property(chunks, fc.integer({ min: 1, max: 64 }), (parts, step) => {
        const body = `${parts
          .map((p) => `${p.length.toString(16)}\r\n${p}\r\n`)
          .filter((_, i) => parts[i] !== '')
          .join('')}0\r\n\r\n`;
        const input = b(`${body}NEXT`);
        expect(bodyLength(CHUNKED, input, step)).toBe(b(body).length);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws anything but SwitchboardError on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), fc.integer({ min: 1, max: 16 }), (u, step) => {
        codeOf(CHUNKED, Buffer.from(u), step);
      }),
      { numRuns: 2000 },
    );
  });
});

// Chunk extensions (issue 17 item 6): [name, chunked body, source]. Every row also runs with
// the extension on the last chunk, where a permissive parser would end the body early.
const goodExt: [string, string, string][] = [
  ['name only', '2;a\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1 chunk-ext-name'],
  ['token value', '2;a=b\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1 chunk-ext-val = token'],
  ['every tchar', "2;!#$%&'*+-.^_`|~09AZaz=!#$%&'*+-.^_`|~\r\nab\r\n0\r\n\r\n", 'RFC 9110 §5.6.2 tchar'],
  ['quoted value', '2;a="b c;d=e"\r\nab\r\n0\r\n\r\n', 'RFC 9110 §5.6.4 quoted-string'],
  ['empty quoted value', '2;a=""\r\nab\r\n0\r\n\r\n', 'RFC 9110 §5.6.4 quoted-string'],
  ['quoted-pair', '2;a="x\\"y\\\\z"\r\nab\r\n0\r\n\r\n', 'RFC 9110 §5.6.4 quoted-pair'],
  ['obs-text inside quotes', '2;a="\xe9\xff"\r\nab\r\n0\r\n\r\n', 'RFC 9110 §5.6.4 qdtext obs-text'],
  ['HTAB inside quotes', '2;a="x\ty"\r\nab\r\n0\r\n\r\n', 'RFC 9110 §5.6.4 qdtext HTAB'],
  ['several extensions', '2;a;b=1;c="2"\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1 *( … )'],
  ['BWS around = and before ;', '2;a \t= \t1 ;b\t;\tc\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1 BWS'],
  ['BWS after a quoted value', '2;a="1" ;b\r\nab\r\n0\r\n\r\n', 'RFC 9112 §7.1.1 BWS'],
  ['extension on the last chunk', '2\r\nab\r\n0;a=b\r\n\r\n', 'RFC 9112 §7.1 last-chunk'],
];

// [name, chunked body, reason in the message, source]
const badExt: [string, string, RegExp, string][] = [
  [
    'empty name (2;)',
    '2;\r\nab\r\n0\r\n\r\n',
    /empty chunk extension name at body byte 2/,
    'RFC 9112 §7.1.1 chunk-ext-name = token',
  ],
  ['empty name on the last chunk (0;)', '0;\r\n\r\n', /empty chunk extension name at body byte 2/, 'RFC 9112 §7.1.1'],
  ['empty name before =', '2;=b\r\nab\r\n0\r\n\r\n', /byte 0x3d where a chunk extension name/, 'RFC 9112 §7.1.1'],
  ['empty name between ;;', '2;a;;b\r\nab\r\n0\r\n\r\n', /byte 0x3b where a chunk extension name/, 'RFC 9112 §7.1.1'],
  [
    'unclosed quote',
    '2;a="b\r\nab\r\n0\r\n\r\n',
    /unterminated quoted-string in chunk extension at body byte 6/,
    'RFC 9110 §5.6.4',
  ],
  [
    'unclosed quote ending in \\',
    '2;a="b\\\r\nab\r\n0\r\n\r\n',
    /unterminated quoted-string/,
    'RFC 9110 §5.6.4 quoted-pair',
  ],
  [
    'unquoted space in value (2;a=b c)',
    '2;a=b c\r\nab\r\n0\r\n\r\n',
    /byte 0x63 after whitespace in chunk extension at body byte 6/,
    'RFC 9112 §7.1.1',
  ],
  [
    'obs-text in a token value (2;a=\\xff)',
    '2;a=\xff\r\nab\r\n0\r\n\r\n',
    /byte 0xff where a chunk extension value/,
    'RFC 9110 §5.6.2 tchar',
  ],
  [
    'obs-text in a name',
    '2;\xe9=1\r\nab\r\n0\r\n\r\n',
    /byte 0xe9 where a chunk extension name/,
    'RFC 9110 §5.6.2 tchar',
  ],
  [
    'obs-text after a token',
    '2;a=b\xff\r\nab\r\n0\r\n\r\n',
    /byte 0xff in chunk extension value/,
    'RFC 9110 §5.6.2 tchar',
  ],
  ['empty value', '2;a=\r\nab\r\n0\r\n\r\n', /empty chunk extension value/, 'RFC 9112 §7.1.1 chunk-ext-val'],
  ['separator in a name', '2;a/b\r\nab\r\n0\r\n\r\n', /byte 0x2f in chunk extension name/, 'RFC 9110 §5.6.2 tchar'],
  ['separator in a value', '2;a=b,c\r\nab\r\n0\r\n\r\n', /byte 0x2c in chunk extension value/, 'RFC 9110 §5.6.2 tchar'],
  ['quote inside a token', '2;a=b"c"\r\nab\r\n0\r\n\r\n', /byte 0x22 in chunk extension value/, 'RFC 9112 §7.1.1'],
  [
    'text after a closing quote',
    '2;a="b"c\r\nab\r\n0\r\n\r\n',
    /byte 0x63 after chunk extension quoted-string/,
    'RFC 9112 §7.1.1',
  ],
  [
    'trailing whitespace after a value',
    '2;a=b \r\nab\r\n0\r\n\r\n',
    /whitespace at the end of a chunk extension/,
    'RFC 9112 §7.1.1 BWS ";"',
  ],
  [
    'trailing whitespace after a name',
    '2;a\t\r\nab\r\n0\r\n\r\n',
    /whitespace at the end of a chunk extension/,
    'RFC 9112 §7.1.1 BWS ";"',
  ],
  [
    'two names without ;',
    '2;a b\r\nab\r\n0\r\n\r\n',
    /byte 0x62 after whitespace in chunk extension/,
    'RFC 9112 §7.1.1',
  ],
  [
    'CTL in quotes',
    '2;a="\x01"\r\nab\r\n0\r\n\r\n',
    /byte 0x01 in chunk extension quoted-string/,
    'RFC 9110 §5.6.4 qdtext',
  ],
  [
    'DEL in quotes',
    '2;a="\x7f"\r\nab\r\n0\r\n\r\n',
    /byte 0x7f in chunk extension quoted-string/,
    'RFC 9110 §5.6.4 qdtext',
  ],
  [
    'CTL after \\',
    '2;a="\\\x00"\r\nab\r\n0\r\n\r\n',
    /byte 0x00 in chunk extension quoted-string/,
    'RFC 9110 §5.6.4 quoted-pair',
  ],
  ['bare LF in a name', '2;a\nab\r\n0\r\n\r\n', /byte 0x0a in chunk extension name/, 'RFC 9112 §2.2'],
  ['bare LF in quotes', '2;a="b\n"\r\nab\r\n0\r\n\r\n', /unterminated quoted-string/, 'RFC 9112 §2.2'],
  ['bare CR in a value', '2;a=b\rc\r\nab\r\n0\r\n\r\n', /bare CR after chunk size/, 'RFC 9112 §2.2'],
  [
    'quoted CRLF smuggling a chunk',
    '2;a="\r\n0\r\n\r\nGET /admin HTTP/1.1\r\n\r\n"\r\nab\r\n0\r\n\r\n',
    /unterminated quoted-string/,
    'RFC 9110 §5.6.4',
  ],
  [
    'too long (4 KiB line)',
    `2;a="${'x'.repeat(5000)}"\r\nab\r\n0\r\n\r\n`,
    /chunk line longer than 4096 bytes/,
    'bounded (ours)',
  ],
];

/** The message of the error thrown while tracking, or 'ok'. */
function messageOf(input: Buffer, step: number): string {
  try {
    bodyLength(CHUNKED, input, step);
    return 'ok';
  } catch (e) {
    if (isSwitchboardError(e) && e.code === 'SWB_ERR_BAD_REQUEST') return e.message;
    throw e;
  }
}

describe('BodyTracker: chunk extensions (RFC 9112 §7.1.1)', () => {
  it.each(goodExt)('accepts %s (%s)', (_name, body) => {
    const input = b(`${body}NEXT`);
    for (const step of [1, 2, 5, 1000]) expect(bodyLength(CHUNKED, input, step)).toBe(b(body).length);
    // The same extension on the last chunk.
    const ext = body.slice(1, body.indexOf('\r\n'));
    const last = `0${ext}\r\n\r\n`;
    for (const step of [1, 1000]) expect(bodyLength(CHUNKED, b(`${last}NEXT`), step)).toBe(b(last).length);
  });

  it.each(badExt)('refuses %s (%s)', (_name, body, reason) => {
    // Fed whole, one byte at a time and in odd pieces: the same 400 with the same reason.
    for (const step of [1, 3, 100_000]) {
      const message = messageOf(b(body), step);
      expect(message).toMatch(/^http1 chunked: /);
      expect(message).toMatch(reason);
    }
  });

  it('refuses before the end of the size line: no byte after it is taken as body', () => {
    // A tracker that throws on the bad byte never returns the rest as body bytes.
    const t = new BodyTracker(CHUNKED);
    expect(t.feed(b('2;a='))).toBe(4);
    expect(() => t.feed(b('\xff\r\nab\r\n0\r\n\r\n'))).toThrow(/byte 0xff/);
  });

  it('the extension grammar holds for generated extensions (accepted iff well-formed)', () => {
    const tchar = fc.constantFrom(..."!#$%&'*+-.^_`|~09azAZ".split(''));
    const token = fc.array(tchar, { minLength: 1, maxLength: 6 }).map((a) => a.join(''));
    const ws = fc.constantFrom('', ' ', '\t', ' \t');
    const quoted = fc
      .array(fc.constantFrom('a', ' ', '\t', ';', '=', '\\"', '\\\\', '\x80', '\xff', ','), { maxLength: 6 })
      .map((a) => `"${a.join('')}"`);
    const ext = fc
      .tuple(ws, token, fc.option(fc.tuple(ws, ws, fc.oneof(token, quoted))))
      .map(([w, name, v]) => `${w};${w}${name}${v === null ? '' : `${v[0]}=${v[1]}${v[2]}`}`);
    fc.assert(
      fc.property(fc.array(ext, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 9 }), (exts, step) => {
        // No BWS before the first ';' (our rule), BWS before the others (RFC 9112 §7.1.1).
        const line = exts.join('').replace(/^[ \t]+/, '');
        const body = `2${line}\r\nab\r\n0\r\n\r\n`;
        expect(bodyLength(CHUNKED, b(`${body}X`), step)).toBe(b(body).length);
      }),
      { numRuns: 500 },
    );
  });
});

describe('BodyTracker: other framings (RFC 9112 §6.3)', () => {
  it('none is done at once and takes nothing', () => {
    const t = new BodyTracker({ kind: 'none' });
    expect(t.done).toBe(true);
    expect(t.feed(b('GET / HTTP/1.1\r\n'))).toBe(0);
  });

  it('length counts down across chunks and stops at the boundary', () => {
    const t = new BodyTracker({ kind: 'length', length: 5 });
    expect(t.feed(b('abc'))).toBe(3);
    expect(t.done).toBe(false);
    expect(t.feed(b('xxdeNEXT'), 2)).toBe(2);
    expect(t.done).toBe(true);
    expect(t.feed(b('more'))).toBe(0);
  });

  it('close and tunnel take everything and never end', () => {
    for (const kind of ['close', 'tunnel'] as const) {
      const t = new BodyTracker({ kind });
      expect(t.feed(b('abcdef'), 1)).toBe(5);
      expect(t.feed(b('0\r\n\r\n'))).toBe(5);
      expect(t.done).toBe(false);
    }
  });

  it('reset starts over as a new tracker would, from any state (one tracker per connection)', () => {
    const t = new BodyTracker(CHUNKED);
    // Left mid-way: inside a chunk extension, with a partial trailer count and offset.
    expect(t.feed(b('5;a=b\r\nab'))).toBe(9);
    t.reset({ kind: 'length', length: 3 });
    expect(t.done).toBe(false);
    expect(t.feed(b('abcNEXT'))).toBe(3);
    expect(t.done).toBe(true);
    t.reset({ kind: 'none' });
    expect(t.done).toBe(true);
    t.reset(CHUNKED);
    const body = b('3\r\nabc\r\n0\r\nX-T: 1\r\n\r\nNEXT');
    expect(t.feed(body)).toBe(body.length - 4);
    expect(t.done).toBe(true);
    // A bad size after a reset is reported at the new message's offset, not the old one's.
    t.reset(CHUNKED);
    expect(() => t.feed(b('zz'))).toThrow(/at byte 0|offset 0|0x7a/);
  });
});

describe('takeTracker / releaseTracker', () => {
  it('lends a released tracker again, reset for the next message; one taker at a time', () => {
    const a = takeTracker({ kind: 'chunked' });
    a.feed(b('5\r\nhel')); // mid-chunk
    releaseTracker(a);
    const again = takeTracker({ kind: 'length', length: 3 });
    expect(again).toBe(a);
    expect(again.done).toBe(false);
    expect(again.feed(b('abcdef'))).toBe(3);
    expect(again.done).toBe(true);
    // Taken: the next taker gets another one.
    expect(takeTracker({ kind: 'none' })).not.toBe(again);
  });
});
