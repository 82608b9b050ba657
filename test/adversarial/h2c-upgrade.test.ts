/**
 * The h2c upgrade under fuzzing (issue 17 item 5), from the `upgradeOffer` generator of fuzz.ts:
 *
 * 1. A request head whose Upgrade offers `h2c` or `h2` anywhere, in any case or version, on any
 *    of its Upgrade lines, with or without `Connection: upgrade`, is refused with a typed 400
 *    (RFC 9113 §3.1); any other offer is accepted, and `upgradeTo` lists its protocols only
 *    when `Connection: upgrade` makes it an upgrade (RFC 9110 §7.8). Splits do not matter.
 * 2. A 101 answering such an offer is a tunnel iff every protocol it announces was offered;
 *    a 101 to a request that offered nothing is always refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { Http1HeadScanner } from '../../src/peek/http1.ts';
import { peekHttp1Response } from '../../src/peek/http1-response.ts';
import { ours, runs, upgradeOffer } from './fuzz.ts';

const MAX = 16_384;

function requestWith(lines: readonly string[], connectionUpgrade: boolean): Buffer {
  const upgrade = lines.map((l) => `Upgrade: ${l}\r\n`).join('');
  const connection = connectionUpgrade ? 'Connection: keep-alive, Upgrade\r\n' : '';
  return Buffer.from(`GET /chat HTTP/1.1\r\nHost: a.test\r\n${connection}${upgrade}\r\n`, 'latin1');
}

/** The verdict fed `step` bytes at a time. */
function stepped(bytes: Buffer, step: number): unknown {
  const s = new Http1HeadScanner(MAX);
  try {
    for (let n = Math.min(step, bytes.length); ; n = Math.min(n + step, bytes.length)) {
      const head = s.feed(bytes.subarray(0, n));
      if (head !== undefined) return { upgradeTo: head.upgradeTo };
      if (n === bytes.length) return 'more';
    }
  } catch (e) {
    if (isSwitchboardError(e)) return { code: e.code };
    throw e;
  }
}

describe('Upgrade: h2c, fuzzed spellings', () => {
  it('refused iff h2c or h2 is offered; otherwise upgradeTo is the offer (with Connection: upgrade)', () => {
    fc.assert(
      fc.property(upgradeOffer, fc.boolean(), fc.integer({ min: 1, max: 9 }), (offer, conn, step) => {
        const bytes = requestWith(offer.lines, conn);
        const v = ours(bytes, MAX);
        if (offer.h2) {
          expect(v, JSON.stringify(offer.lines)).toEqual({ code: 'SWB_ERR_BAD_REQUEST' });
        } else {
          expect('head' in v, JSON.stringify(offer.lines)).toBe(true);
          const head = (v as { head: { upgrade: boolean; upgradeTo: readonly string[] } }).head;
          expect(head.upgrade).toBe(conn);
          expect(head.upgradeTo).toEqual(conn ? offer.names : []);
        }
        const whole = 'head' in v ? { upgradeTo: v.head.upgradeTo } : v;
        expect(stepped(bytes, step)).toEqual(whole);
      }),
      { numRuns: runs(2000) },
    );
  });

  it('a 101 is a tunnel iff it announces only offered protocols', () => {
    fc.assert(
      fc.property(upgradeOffer, upgradeOffer, fc.boolean(), (offered, announced, asked) => {
        const offer = asked ? offered.names : [];
        const bytes = Buffer.from(
          `HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n${announced.lines.map((l) => `Upgrade: ${l}\r\n`).join('')}\r\n`,
          'latin1',
        );
        let verdict: string;
        try {
          verdict = peekHttp1Response(bytes, MAX, 'GET', offer)?.bodyFraming.kind ?? 'more';
        } catch (e) {
          if (!isSwitchboardError(e)) throw e;
          verdict = e.code;
        }
        const ok = offer.length > 0 && announced.names.every((n) => offer.includes(n));
        expect(verdict).toBe(ok ? 'tunnel' : 'SWB_ERR_BAD_REQUEST');
      }),
      { numRuns: runs(2000) },
    );
  });
});
