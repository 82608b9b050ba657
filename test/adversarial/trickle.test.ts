/**
 * Trickled heads, fuzzed (issue 17 item 9): a request head cut into reads anywhere — one byte
 * per read included — gets exactly the verdict the whole head gets, from the same incremental
 * peek the panels use (one growing buffer, one sniffer per connection), and the bytes handed on
 * are the bytes sent.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { GrowBuffer } from '../../src/peek/grow-buffer.ts';
import { Sniffer } from '../../src/peek/sniff.ts';
import { ours, readCuts, requestHead, runs, timeoutFor } from './fuzz.ts';

const MAX = 16_384;

/** Feeds `bytes` to one sniffer through one growing buffer, read by read at `cuts`. */
function trickled(bytes: Buffer, cuts: readonly number[]) {
  const sniffer = new Sniffer(MAX, 'off');
  const buffer = new GrowBuffer(MAX);
  let from = 0;
  try {
    for (const to of [...cuts, bytes.length]) {
      const all = buffer.append(bytes.subarray(from, to));
      from = to;
      const sniffed = sniffer.decide(all);
      if (sniffed !== undefined) {
        if (sniffed.kind !== 'http1') throw new Error(`sniffed ${sniffed.kind}`);
        expect(all.equals(bytes.subarray(0, all.length))).toBe(true);
        return { head: sniffed.head };
      }
    }
    return { more: true } as const;
  } catch (e) {
    if (isSwitchboardError(e)) return { code: e.code };
    throw e;
  }
}

describe('trickled heads: any read boundaries, the verdict of the whole head', () => {
  it(
    'generated heads (hazards included) cut anywhere',
    () => {
      fc.assert(
        fc.property(
          requestHead.chain((head) => fc.tuple(fc.constant(head), readCuts(head.length))),
          ([head, cuts]) => {
            expect(trickled(head, cuts)).toEqual(ours(head, MAX));
          },
        ),
        { numRuns: runs(300) },
      );
    },
    timeoutFor(300),
  );
});
