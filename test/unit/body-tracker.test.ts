/** BodyTracker: where a message body ends, fed whole and byte by byte (RFC 9112 §6, §7.1). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/errors.ts';
import { BodyTracker } from '../../src/peek/body-tracker.ts';
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
});
