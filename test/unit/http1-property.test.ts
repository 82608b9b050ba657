/**
 * Properties of peekHttp1 on arbitrary and on mutated-valid input: it never throws anything but
 * a SwitchboardError, and the verdict does not depend on how the bytes were split across reads.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Http1Head, Http1HeadScanner, peekHttp1 } from '../../src/peek/http1.ts';
import { raw, type Verdict, verdictOf } from './http1-helpers.ts';

/** Feeds `bytes` cut at the given points into one scanner. */
function feedAt(bytes: Buffer, cuts: number[], max: number): Verdict {
  const scanner = new Http1HeadScanner(max);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  points.push(bytes.length);
  let v: Verdict = { more: true };
  for (const n of points) {
    v = verdictOf(() => scanner.feed(bytes.subarray(0, n)));
    if (!('more' in v)) return v;
  }
  return v;
}

// Pieces that make random input look like HTTP often enough to reach the deep checks.
const piece = fc.constantFrom(
  'GET ',
  'POST ',
  'CONNECT ',
  'OPTIONS ',
  '/',
  '/a/../b',
  '%2e',
  '%00',
  '*',
  'http://a',
  ' HTTP/1.1',
  ' HTTP/1.0',
  '\r\n',
  '\r',
  '\n',
  ' ',
  '\t',
  'Host: ',
  'host:a',
  'Content-Length: ',
  'Transfer-Encoding: ',
  'chunked',
  ', ',
  '5',
  'Connection: close',
  ':',
  '\x00',
  '\xff',
  'a',
  '[::1]',
);
const httpish = fc.array(piece, { maxLength: 30 }).map((parts) => raw(parts.join('')));
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((u) => Buffer.from(u)),
  httpish,
  httpish.map((b) => Buffer.concat([b, raw('\r\n\r\n')])),
);

const VALID = raw(
  'POST /a/b?c=d HTTP/1.1\r\nHost: www.example.test\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nabc',
);

describe('peekHttp1 properties', () => {
  it('throws only SwitchboardError, on arbitrary bytes', () => {
    fc.assert(
      fc.property(bytes, fc.integer({ min: 1, max: 300 }), (buf, max) => {
        verdictOf(() => peekHttp1(buf, max)); // rethrows anything that is not a SwitchboardError
      }),
      { numRuns: 3000 },
    );
  });

  it('gives the same verdict for any split of the input', () => {
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 8, max: 300 }), (buf, cuts, max) => {
        const whole = verdictOf(() => peekHttp1(buf, max));
        expect(feedAt(buf, cuts, max)).toEqual(whole);
      }),
      { numRuns: 2000 },
    );
  });

  it('on single-byte mutations of a valid head: typed errors only, split-independent', () => {
    fc.assert(
      fc.property(fc.nat(VALID.length - 1), fc.integer({ min: 0, max: 255 }), fc.array(fc.nat()), (at, byte, cuts) => {
        const buf = Buffer.from(VALID);
        buf[at] = byte;
        const whole = verdictOf(() => peekHttp1(buf, 16384));
        expect(feedAt(buf, cuts, 16384)).toEqual(whole);
      }),
      { numRuns: 3000 },
    );
  });

  it('finds the valid head itself', () => {
    const head = peekHttp1(VALID, 16384) as Http1Head;
    expect(head.bodyFraming).toEqual({ kind: 'length', length: 3 });
    expect(head.headLength).toBe(VALID.length - 3);
  });
});
