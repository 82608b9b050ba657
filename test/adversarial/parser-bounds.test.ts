/**
 * "Never reads past its bound" (issue 13 §1), for every peek parser: given a Buffer that is a
 * view into a larger allocation whose bytes after the view are poison, a parser must reach the
 * same verdict as on a private copy (it never looks beyond `buf.length`, e.g. through
 * `buf.buffer`), and what it reports as consumed fits both the input and its size limit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { peekH2c } from '../../src/peek/h2c.ts';
import { peekClientHello } from '../../src/peek/tls-hello.ts';
import { parseProxyHeader } from '../../src/proxy-protocol/index.ts';
import { alpnExt, handshake, helloBody, records, sniExt } from '../fixtures/tls/hello-builder.ts';
import { ours, requestHead, runs } from './fuzz.ts';

type Verdict = { readonly value: unknown } | { readonly code: string };

function verdict(fn: () => unknown): Verdict {
  try {
    return { value: fn() };
  } catch (e) {
    if (isSwitchboardError(e)) return { code: e.code };
    throw e;
  }
}

/** `bytes` as a view in the middle of a bigger buffer, poisoned with `fill` on both sides. */
function embedded(bytes: Uint8Array, fill: number): Buffer {
  const big = Buffer.alloc(bytes.length + 64, fill);
  big.set(bytes, 32);
  return big.subarray(32, 32 + bytes.length);
}

/** Truncations and byte flips of a valid message, plus plain random bytes. */
function mutations(valid: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> {
  return fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((u) => Buffer.from(u)),
    fc.tuple(valid, fc.nat()).map(([b, n]) => b.subarray(0, n % (b.length + 1))),
    fc.tuple(valid, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([b, i, x]) => {
      const c = Buffer.from(b);
      if (c.length > 0) c[i % c.length] = x;
      return c;
    }),
    valid,
  );
}

const tlsHello = fc
  .tuple(
    fc.constantFrom('a.test', 'www.example.test', 'x'.repeat(200)),
    fc.array(fc.nat({ max: 300 }), { maxLength: 3 }),
  )
  .map(([name, cuts]) => records(handshake(helloBody([sniExt(name), alpnExt('h2', 'http/1.1')])), cuts));
const proxyV1 = fc.constantFrom(
  'PROXY TCP4 192.0.2.1 198.51.100.2 51000 443\r\n',
  'PROXY TCP6 2001:db8::1 2001:db8::2 1 2\r\n',
  'PROXY UNKNOWN\r\n',
);
const v2 = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');
const proxyV2 = fc
  .uint8Array({ maxLength: 40 })
  .map((tlv) =>
    Buffer.concat([
      v2,
      Buffer.from([0x21, 0x11]),
      Buffer.from([0, 12 + tlv.length]),
      Buffer.from([192, 0, 2, 1, 198, 51, 100, 2, 0xc7, 0x38, 0x01, 0xbb]),
      tlv,
    ]),
  );
const h2c = fc.uint8Array({ maxLength: 120 }).map((tail) =>
  Buffer.concat([
    Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'),
    Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]), // empty SETTINGS
    Buffer.from(tail),
  ]),
);

interface Case {
  readonly name: string;
  readonly input: fc.Arbitrary<Buffer>;
  readonly parse: (b: Buffer, max: number) => unknown;
  /** Bytes the parser says it consumed (undefined when it needs more). */
  readonly used: (v: unknown) => number | undefined;
}

const length = (v: unknown) => (v as { length: number } | undefined)?.length;
const cases: Case[] = [
  {
    name: 'HTTP/1 head (RFC 9112 §2.2)',
    input: mutations(requestHead),
    parse: (b, max) => {
      const v = ours(b, max);
      if ('code' in v) throw Object.assign(new Error(v.code), { swb: v.code });
      return 'head' in v ? v.head : undefined;
    },
    used: (v) => (v as { headLength: number } | undefined)?.headLength,
  },
  {
    name: 'TLS ClientHello (RFC 8446 §4.1.2)',
    input: mutations(tlsHello),
    parse: (b, max) => peekClientHello(b, max),
    used: length,
  },
  {
    name: 'PROXY v1/v2 (proxy-protocol.txt §2.1, §2.2)',
    input: mutations(
      fc.oneof(
        proxyV1.map((s) => Buffer.from(s, 'latin1')),
        proxyV2,
      ),
    ),
    parse: (b, max) => parseProxyHeader(b, 'any', max),
    used: length,
  },
  {
    name: 'h2c preface + first HEADERS (RFC 9113 §3.4, §6.2)',
    input: mutations(h2c),
    parse: (b, max) => peekH2c(b, max),
    used: length,
  },
];

describe('parsers never read past their bound', () => {
  it.each(cases)('$name: a poisoned view gives the same verdict as a copy; consumed ≤ input and limit', (c) => {
    fc.assert(
      fc.property(c.input, fc.integer({ min: 64, max: 4096 }), fc.integer({ min: 0, max: 255 }), (bytes, max, fill) => {
        const run = (b: Buffer) =>
          verdict(() => {
            try {
              return c.parse(b, max);
            } catch (e) {
              const swb = (e as { swb?: string }).swb;
              if (swb !== undefined) return { code: swb };
              throw e;
            }
          });
        const copy = run(Buffer.from(bytes));
        const view = run(embedded(bytes, fill));
        expect(view).toEqual(copy);
        if ('value' in copy) {
          const used = c.used(copy.value);
          if (used !== undefined) {
            expect(used).toBeLessThanOrEqual(bytes.length);
            expect(used).toBeLessThanOrEqual(max + 256); // a limit, plus at most one frame/record header
          }
        }
      }),
      { numRuns: runs(2000) },
    );
  });
});
