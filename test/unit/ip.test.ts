/**
 * src/base/ip.ts: strict parsing (Go net.ParseIP rules), canonical text (RFC 5952 §4), CIDR parsing
 * and containment (Go net.ParseCIDR / IPNet.Contains), and the canonical hash bytes.
 */
import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalIp, cidrContains, compareIpBytes, ipHashBytes, parseCidr, parseIp } from '../../src/base/ip.ts';

// [source, input, canonical text or undefined when invalid]
const parseRows: ReadonlyArray<readonly [string, string, string | undefined]> = [
  ['RFC 791 dotted quad', '192.0.2.1', '192.0.2.1'],
  ['RFC 791', '0.0.0.0', '0.0.0.0'],
  ['RFC 791', '255.255.255.255', '255.255.255.255'],
  ['Go ParseIP: octet > 255', '256.1.1.1', undefined],
  ['Go ParseIP: leading zero refused', '1.01.1.1', undefined],
  ['Go ParseIP: three parts (bfe.md §2.1#16)', '1.1.1', undefined],
  ['Go ParseIP: five parts', '1.1.1.1.1', undefined],
  ['Go ParseIP: empty octet', '1..1.1', undefined],
  ['RFC 5952 §4.3 lower case', '2001:DB8::1', '2001:db8::1'],
  ['RFC 5952 §4.1 leading zeros dropped', '2001:0DB8:02de:0::e13', '2001:db8:2de::e13'],
  ['RFC 5952 §4.2.2 one zero group is not ::', '2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
  ['RFC 5952 §4.2.3 longest run', '2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
  ['RFC 5952 §4.2.3 first of equal runs', '2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
  ['RFC 4291 §2.5.2 unspecified', '::', '::'],
  ['RFC 4291 §2.5.3 loopback', '::1', '::1'],
  ['RFC 4291 trailing ::', '1::', '1::'],
  ['RFC 4291 :: for one group', '1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
  ['RFC 4291 full form', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
  ['RFC 4291 §2.2 dotted tail', '64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
  ['src/base/ip.ts: IPv4-mapped is IPv4', '::ffff:10.1.2.3', '10.1.2.3'],
  ['src/base/ip.ts: IPv4-mapped in hex is IPv4', '::FFFF:a01:203', '10.1.2.3'],
  ['two :: (bfe.md §2.1#14)', '2001::DB8:2de::e13', undefined],
  ['nine groups', '1:2:3:4:5:6:7:8:9', undefined],
  [':: plus eight groups', '::1:2:3:4:5:6:7:8', undefined],
  ['five hex digits', '12345::', undefined],
  ['leading single colon', ':1::', undefined],
  ['trailing single colon', '1::2:', undefined],
  ['zone refused', 'fe80::1%eth0', undefined],
  ['brackets refused', '[::1]', undefined],
  ['dotted tail not last', '::1.2.3.4:5', undefined],
  ['empty', '', undefined],
  ['garbage', 'example.com', undefined],
];

describe('parseIp / canonicalIp', () => {
  it.each(parseRows)('%s: %s', (_src, input, expected) => {
    expect(canonicalIp(input)).toBe(expected);
  });

  it('agrees with node:net isIP on which strings are addresses (property over IPv6-ish text)', () => {
    const v6ish = fc
      .array(fc.constantFrom('0', '1', 'a', 'F', 'ffff', '00000', ':', '::', '.', '1.2.3.4', '10'), { maxLength: 12 })
      .map((p) => p.join(''));
    fc.assert(
      fc.property(v6ish, (text) => {
        // node accepts leading-zero IPv4 in some versions; compare only where that cannot arise.
        fc.pre(!/(^|[.:])0\d/.test(text));
        expect(parseIp(text) !== undefined).toBe(isIP(text) !== 0);
      }),
      { numRuns: 3000 },
    );
  });

  it('round-trips canonical text (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (text) => {
        const ip = parseIp(text);
        expect(ip).toBeDefined();
        const again = parseIp(ip?.text ?? '');
        expect(again?.text).toBe(ip?.text);
        expect(compareIpBytes(again?.bytes ?? new Uint8Array(16), ip?.bytes ?? new Uint8Array(16))).toBe(0);
      }),
      { numRuns: 1000 },
    );
  });
});

// [source, cidr, address, contained]
const cidrRows: ReadonlyArray<readonly [string, string, string, boolean]> = [
  ['RFC 4632 §3.1', '10.0.0.0/8', '10.255.0.1', true],
  ['RFC 4632 §3.1', '10.0.0.0/8', '11.0.0.1', false],
  ['RFC 4632 host bits cleared', '10.1.2.3/16', '10.1.99.1', true],
  ['RFC 4632 /0', '0.0.0.0/0', '203.0.113.9', true],
  ['RFC 4632 /32', '192.0.2.1/32', '192.0.2.1', true],
  ['RFC 4632 /32', '192.0.2.1/32', '192.0.2.2', false],
  ['RFC 4632 odd prefix', '192.0.2.128/25', '192.0.2.127', false],
  ['RFC 4632 odd prefix', '192.0.2.128/25', '192.0.2.200', true],
  ['RFC 4291 §2.3', '2001:db8::/32', '2001:db8:ffff::1', true],
  ['RFC 4291 §2.3', '2001:db8::/32', '2001:db9::1', false],
  ['src/base/ip.ts: mapped client in IPv4 CIDR', '127.0.0.0/8', '::ffff:127.0.0.1', true],
  ['Go IPNet.Contains: families never mix', '::/0', '127.0.0.1', false],
  ['Go IPNet.Contains: families never mix', '0.0.0.0/0', '::1', false],
  ['src/base/ip.ts: a bare address is a host route', '192.0.2.7', '192.0.2.7', true],
  ['unparsable address', '0.0.0.0/0', 'not-an-ip', false],
];

describe('parseCidr / cidrContains', () => {
  it.each(cidrRows)('%s: %s contains %s → %s', (_src, cidr, ip, expected) => {
    const block = parseCidr(cidr);
    expect(block).toBeDefined();
    if (block) expect(cidrContains(block, ip)).toBe(expected);
  });

  it.each(['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/08', '10.0.0/8', '10.0.0.0/-1', '10.0.0.0/8/8'])(
    'refuses %s',
    (text) => {
      expect(parseCidr(text)).toBeUndefined();
    },
  );

  it('prints the network in canonical form', () => {
    expect(parseCidr('10.1.2.3/16')?.text).toBe('10.1.0.0/16');
    expect(parseCidr('2001:DB8::1/32')?.text).toBe('2001:db8::/32');
    expect(parseCidr('::ffff:10.1.2.3/8')?.text).toBe('10.0.0.0/8');
  });
});

describe('ipHashBytes (canonical hash form, bfe.md §5)', () => {
  it('is 4 bytes for IPv4, whether written plain or IPv4-mapped', () => {
    expect([...ipHashBytes('10.1.2.3')]).toEqual([10, 1, 2, 3]);
    expect([...ipHashBytes('::ffff:10.1.2.3')]).toEqual([10, 1, 2, 3]);
  });

  it('is 16 bytes for IPv6', () => {
    const b = ipHashBytes('2001:db8::1');
    expect(b.length).toBe(16);
    expect([b[0], b[1], b[2], b[3], b[15]]).toEqual([0x20, 0x01, 0x0d, 0xb8, 1]);
  });

  it('falls back to the UTF-8 text for something that is not an address', () => {
    expect([...ipHashBytes('x')]).toEqual([0x78]);
  });
});
