/**
 * SettingsAckFilter (src/data-path/h2c-settings-ack.ts): the client → backend bytes of an h2c connection
 * pass unchanged except the first SETTINGS ACK (RFC 9113 §6.5.3), whatever the reads' split.
 * Each row is [name, bytes before, the cut bytes (or none), bytes after], every input starting
 * with the client preface and its SETTINGS, as the peek guarantees.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SettingsAckFilter } from '../../src/data-path/h2c-settings-ack.ts';
import { FLAG, FRAME } from '../../src/peek/h2-frames.ts';
import { block, frame, headers, prelude } from '../fixtures/h2/build.ts';

const ACK = frame(FRAME.SETTINGS, FLAG.ACK, 0);
const WINDOW = frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.from([0, 0x0f, 0, 1]));
const HEADERS = headers(
  block([
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', '/switchboard.example.Echo/Say'],
    [':authority', 'echo.test'],
  ]),
);
const data = (payload: Buffer, stream = 1) => frame(FRAME.DATA, 0, stream, payload);
const NONE = Buffer.alloc(0);

const CASES: [string, Buffer, Buffer, Buffer][] = [
  // grpc-js waits for the server's SETTINGS, so its ACK comes before its first HEADERS.
  [
    'ACK before the first HEADERS (grpc-js; RFC 9113 §3.4, §6.5.3)',
    Buffer.concat([prelude(), WINDOW]),
    ACK,
    Buffer.concat([HEADERS, data(Buffer.from('x'))]),
  ],
  // curl and nghttp send HEADERS at once, and ACK when our SETTINGS arrive; the second ACK is
  // for the backend's SETTINGS and passes.
  [
    'ACK after HEADERS, the next ACK passes (curl, nghttp; §6.5.3)',
    Buffer.concat([prelude(), WINDOW, HEADERS]),
    ACK,
    Buffer.concat([ACK, data(Buffer.from('body'))]),
  ],
  // Unknown flags are ignored on receipt (§4.1): still an ACK.
  ['ACK with unknown flag bits set (§4.1)', prelude(), frame(FRAME.SETTINGS, FLAG.ACK | 0xf0, 0), HEADERS],
  // The reserved bit of the stream identifier is ignored on receipt (§4.1).
  [
    'ACK with the reserved bit set (§4.1)',
    prelude(),
    Buffer.from([0, 0, 0, FRAME.SETTINGS, FLAG.ACK, 0x80, 0, 0, 0]),
    HEADERS,
  ],
  // The walk follows declared lengths: ACK bytes inside a payload are payload.
  [
    'ACK bytes inside a DATA payload are data (§4.1)',
    Buffer.concat([prelude(), HEADERS, data(Buffer.concat([ACK, ACK]))]),
    ACK,
    data(ACK),
  ],
  // Frames the backend must refuse are not ours to cut: it sees them as sent.
  [
    'SETTINGS ACK with a payload is not cut (§6.5)',
    Buffer.concat([prelude(), frame(FRAME.SETTINGS, FLAG.ACK, 0, Buffer.alloc(6)), HEADERS]),
    NONE,
    NONE,
  ],
  [
    'SETTINGS ACK on stream 1 is not cut (§6.5)',
    Buffer.concat([prelude(), frame(FRAME.SETTINGS, FLAG.ACK, 1), HEADERS]),
    NONE,
    NONE,
  ],
  [
    'a SETTINGS frame without ACK is not cut (§6.5)',
    Buffer.concat([prelude(), frame(FRAME.SETTINGS, 0, 0), HEADERS]),
    NONE,
    NONE,
  ],
  [
    'no ACK at all: every byte passes (§6.5.3)',
    Buffer.concat([prelude(), WINDOW, HEADERS, data(Buffer.alloc(100))]),
    NONE,
    NONE,
  ],
  // A stream that ends inside a frame header: the held bytes are flushed, not lost.
  ['the stream ends inside a frame header (§4.1)', Buffer.concat([prelude(), HEADERS, ACK.subarray(0, 5)]), NONE, NONE],
];

/** Feeds `input` cut at `cuts` and returns every byte the filter forwarded, and the filter. */
function run(input: Buffer, cuts: readonly number[]): { out: Buffer; filter: SettingsAckFilter } {
  const filter = new SettingsAckFilter();
  const points = [...new Set(cuts.filter((c) => c > 0 && c < input.length))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const to of [...points, input.length]) {
    out.push(filter.push(input.subarray(from, to)));
    from = to;
  }
  out.push(filter.flush() ?? NONE);
  return { out: Buffer.concat(out), filter };
}

describe('SettingsAckFilter: the client stream minus its first SETTINGS ACK', () => {
  describe.each(CASES)('%s', (_name, before, cut, after) => {
    const input = Buffer.concat([before, cut, after]);
    const want = Buffer.concat([before, after]);

    it('whole, one byte per read, seven bytes per read', () => {
      const ones = Array.from({ length: input.length }, (_, i) => i);
      const sevens = ones.filter((i) => i % 7 === 0);
      for (const cuts of [[], ones, sevens]) {
        const { out, filter } = run(input, cuts);
        expect(out).toEqual(want);
        expect(filter.done).toBe(cut.length > 0);
      }
    });

    it('every split into two reads, and random splits', () => {
      for (let i = 1; i < input.length; i++) expect(run(input, [i]).out).toEqual(want);
      fc.assert(
        fc.property(fc.array(fc.nat({ max: input.length }), { maxLength: 12 }), (cuts) => {
          expect(run(input, cuts).out).toEqual(want);
        }),
      );
    });
  });

  it('after the cut, chunks pass as they are (no copy, no walk)', () => {
    const filter = new SettingsAckFilter();
    filter.push(Buffer.concat([prelude(), ACK]));
    expect(filter.done).toBe(true);
    const chunk = Buffer.concat([ACK, HEADERS]);
    expect(filter.push(chunk)).toBe(chunk);
    expect(filter.flush()).toBeUndefined();
  });
});
