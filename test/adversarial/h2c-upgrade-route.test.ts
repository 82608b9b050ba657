/**
 * `Upgrade: h2c` on an `h2c: route` listener under fuzzing (issue 40 item 7): the peek's scanner
 * made with `h2cUpgrade` (src/peek/h2c-upgrade.ts) lets a request through as an h2c upgrade iff
 * its Upgrade offers `h2c` and never `h2`, Connection names `Upgrade` and `HTTP2-Settings`, and
 * it has no body; an offer of `h2` is refused as before, and an offer without either is an
 * ordinary head. Splits do not matter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { isH2cUpgrade } from '../../src/peek/h2c-upgrade.ts';
import { DEFAULT_MAX_HEADER_COUNT, Http1HeadScanner } from '../../src/peek/http1.ts';
import { runs, upgradeOffer } from './fuzz.ts';

const MAX = 16_384;

function request(lines: readonly string[], connection: boolean, body: boolean): Buffer {
  const upgrade = lines.map((l) => `Upgrade: ${l}\r\n`).join('');
  const conn = connection ? 'Connection: keep-alive, Upgrade, HTTP2-Settings\r\n' : 'Connection: Upgrade\r\n';
  const length = body ? 'Content-Length: 2\r\n' : '';
  return Buffer.from(
    `GET /x HTTP/1.1\r\nHost: a.test\r\n${conn}${upgrade}HTTP2-Settings: AAMAAABk\r\n${length}\r\n`,
    'latin1',
  );
}

/** The verdict fed `step` bytes at a time: 'h2c', 'plain' or the error code. */
function verdict(bytes: Buffer, step: number): string {
  const s = new Http1HeadScanner(MAX, undefined, DEFAULT_MAX_HEADER_COUNT, true);
  try {
    for (let n = Math.min(step, bytes.length); ; n = Math.min(n + step, bytes.length)) {
      const head = s.feed(bytes.subarray(0, n));
      if (head !== undefined) return isH2cUpgrade(head) ? 'h2c' : 'plain';
      if (n === bytes.length) return 'more';
    }
  } catch (e) {
    if (isSwitchboardError(e)) return e.code;
    throw e;
  }
}

describe('Upgrade: h2c on h2c: route, fuzzed spellings', () => {
  it('switched iff h2c is offered (never h2) with Connection: Upgrade, HTTP2-Settings and no body', () => {
    fc.assert(
      fc.property(
        upgradeOffer,
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 1, max: 64 }),
        (offer, connection, body, step) => {
          const h2 = offer.names.includes('h2');
          const h2c = offer.names.includes('h2c');
          const expected = h2
            ? 'SWB_ERR_BAD_REQUEST'
            : !h2c
              ? 'plain'
              : connection && !body
                ? 'h2c'
                : 'SWB_ERR_BAD_REQUEST';
          expect(verdict(request(offer.lines, connection, body), step), JSON.stringify(offer.lines)).toBe(expected);
        },
      ),
      { numRuns: runs(2000) },
    );
  });
});
