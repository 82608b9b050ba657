/**
 * src/request/client-ip.ts: which forwarded entry names the client, and when a header is believed at all.
 */
import { describe, expect, it } from 'vitest';
import {
  clientAddressing,
  clientFromForwardedFor,
  clientFromRealIp,
  forwardedClientIp,
  forwardedEntryIp,
  trustedSourcesCheck,
} from '../../src/request/client-ip.ts';

const trusted = trustedSourcesCheck(['10.0.0.0/8', '2001:db8:ffff::/48']);

describe('X-Forwarded-For: the rightmost untrusted hop', () => {
  it.each([
    // [values, expected, why]
    [['203.0.113.7'], '203.0.113.7', 'one entry, untrusted → the client'],
    [
      ['198.51.100.1, 203.0.113.7'],
      '203.0.113.7',
      'the leftmost entry is client-written; the rightmost untrusted wins',
    ],
    [['203.0.113.7, 10.1.2.3'], '203.0.113.7', 'a trusted proxy of ours is skipped'],
    [['203.0.113.7, 10.1.2.3, 10.9.9.9'], '203.0.113.7', 'two tiers of our proxies are skipped'],
    [['10.1.2.3, 10.9.9.9'], '10.1.2.3', 'every entry trusted → the leftmost'],
    [['198.51.100.1', '203.0.113.7'], '203.0.113.7', 'field lines are joined in order (RFC 9110 §5.3)'],
    [['evil, 203.0.113.7'], '203.0.113.7', 'garbage left of the client is never reached'],
    [['203.0.113.7, unknown'], undefined, 'an unreadable hop ends the walk: header ignored'],
    [['203.0.113.7,'], undefined, 'an empty entry is unreadable'],
    [['2001:DB8::7'], '2001:db8::7', 'IPv6, canonicalised (RFC 5952)'],
    [['[2001:db8::7]:443'], '2001:db8::7', 'bracketed IPv6 with a port'],
    [['203.0.113.7:5555'], '203.0.113.7', 'IPv4 with a port'],
    [['::ffff:203.0.113.7'], '203.0.113.7', 'IPv4-mapped IPv6 is IPv4'],
    [['203.0.113.7, 2001:db8:ffff::1'], '203.0.113.7', 'a trusted IPv6 proxy is skipped'],
    [['203.000.113.7'], undefined, 'leading zeros are ambiguous (strict parse)'],
    [[], undefined, 'no header'],
  ] as [string[], string | undefined, string][])('%j → %s (%s)', (values, want) => {
    expect(clientFromForwardedFor(values, trusted)).toBe(want);
  });
});

describe('X-Real-IP', () => {
  it.each([
    [['203.0.113.7'], '203.0.113.7'],
    [[' 203.0.113.7 '], '203.0.113.7'],
    [['203.0.113.7', '198.51.100.1'], undefined], // two lines: ambiguous, ignored
    [['203.0.113.7, 198.51.100.1'], undefined], // a list is not one address
    [['nope'], undefined],
  ])('%j → %s', (values, want) => {
    expect(clientFromRealIp(values)).toBe(want);
  });
});

describe('forwardedEntryIp', () => {
  it.each([
    ['1.2.3.4', '1.2.3.4'],
    ['[::1]', '::1'],
    ['[::1]x', undefined],
    ['[::1', undefined],
    ['1.2.3.4:99999x', undefined],
    ['2001:db8::1', '2001:db8::1'],
  ])('%s → %s', (entry, want) => {
    expect(forwardedEntryIp(entry)).toBe(want);
  });
});

describe('forwardedClientIp: only a trusted hop is believed', () => {
  const headers = (map: Record<string, string[]>) => (name: string) => map[name] ?? [];
  const xff = clientAddressing({
    trustedSources: ['127.0.0.0/8'],
    clientIpFrom: 'header',
    clientIpHeader: 'X-Forwarded-For',
  });
  const real = clientAddressing({
    trustedSources: ['127.0.0.0/8'],
    clientIpFrom: 'header',
    clientIpHeader: 'X-Real-IP',
  });
  const conn = clientAddressing({ trustedSources: ['127.0.0.0/8'], clientIpFrom: 'connection' });

  it('reads X-Forwarded-For from a trusted connection address', () => {
    expect(forwardedClientIp(xff, '127.0.0.1', headers({ 'x-forwarded-for': ['203.0.113.7'] }))).toBe('203.0.113.7');
  });
  it('ignores it from an untrusted connection address (no client chooses its own address)', () => {
    expect(forwardedClientIp(xff, '192.0.2.1', headers({ 'x-forwarded-for': ['203.0.113.7'] }))).toBeUndefined();
  });
  it('reads only the configured header', () => {
    expect(forwardedClientIp(real, '127.0.0.1', headers({ 'x-forwarded-for': ['203.0.113.7'] }))).toBeUndefined();
    expect(forwardedClientIp(real, '127.0.0.1', headers({ 'x-real-ip': ['203.0.113.8'] }))).toBe('203.0.113.8');
  });
  it('reads nothing on clientIpFrom: connection', () => {
    expect(forwardedClientIp(conn, '127.0.0.1', headers({ 'x-forwarded-for': ['203.0.113.7'] }))).toBeUndefined();
  });
  it('is built once per listener config object', () => {
    const l = { trustedSources: ['10.0.0.0/8'], clientIpFrom: 'header' };
    expect(clientAddressing(l)).toBe(clientAddressing(l));
  });
});
