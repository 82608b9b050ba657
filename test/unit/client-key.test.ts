/**
 * What one client is for the per-client caps (issue 39 item 3): src/listener/client-key.ts, and
 * admission counting a PROXY listener's client after the header (`admit` without a key, then
 * `client`), on the local and the shared (worker threads) admission alike.
 */
import { describe, expect, it } from 'vitest';
import { type Admission, LocalAdmission, REFUSED } from '../../src/admission/admission.ts';
import { SharedAdmission } from '../../src/admission/shared-admission.ts';
import { configSchema, limitsSchema } from '../../src/config/schema.ts';
import { clientKey } from '../../src/listener/client-key.ts';

describe('clientKey', () => {
  it.each([
    // address, limits.clientIpv6Prefix, key
    ['192.0.2.1', 64, '192.0.2.1'], // IPv4: the whole address, whatever the IPv6 prefix
    ['192.0.2.1', 8, '192.0.2.1'],
    ['::ffff:192.0.2.1', 64, '192.0.2.1'], // IPv4-mapped (a dual-stack socket's IPv4 peer) is IPv4
    ['::FFFF:192.0.2.1', 128, '192.0.2.1'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', 64, '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', 64, '2001:db8:1:2::/64'], // same /64: same client
    ['2001:DB8:1:2:0:0:0:ffff', 64, '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', 64, '2001:db8:1:3::/64'], // the next /64: another client
    ['2001:db8:1:2ff::1', 56, '2001:db8:1:200::/56'],
    ['2001:db8:1:2ff::1', 60, '2001:db8:1:2f0::/60'],
    ['2001:db8:1:2ff::1', 61, '2001:db8:1:2f8::/61'],
    ['2001:db8::1', 128, '2001:db8::1'], // 128: whole addresses
    ['::1', 64, '::/64'],
    ['', 64, ''], // the kernel no longer knew the peer
    ['not-an-ip', 64, 'not-an-ip'],
  ] as const)('%s with /%i → %s', (ip, prefix, key) => {
    expect(clientKey(ip, prefix)).toBe(key);
  });

  it('limits.clientIpv6Prefix: 64 by default, 1 to 128, unknown values refused with their path', () => {
    expect(limitsSchema.parse({}).clientIpv6Prefix).toBe(64);
    expect(limitsSchema.parse({ clientIpv6Prefix: 128 }).clientIpv6Prefix).toBe(128);
    for (const bad of [0, 129, 48.5, '64']) {
      const r = configSchema.safeParse({
        listeners: [{ name: 'web', address: '127.0.0.1:0' }],
        limits: { clientIpv6Prefix: bad },
      });
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]?.path).toEqual(['limits', 'clientIpv6Prefix']);
    }
  });
});

const IMPLEMENTATIONS: [string, () => Admission][] = [
  ['local', () => new LocalAdmission()],
  ['shared', () => SharedAdmission.view(SharedAdmission.create(2).state, 0)],
];

describe.each(IMPLEMENTATIONS)('%s admission behind PROXY', (_name, make) => {
  const l = limitsSchema.parse({ maxConnections: 100, maxConnectionsPerClient: 3 });

  it('admit without a key counts the balancer against the global and listener caps only', () => {
    const a = make();
    const x = a.listener('x');
    const handles: number[] = [];
    for (let i = 0; i < 6; i++) handles.push(a.admit(x, undefined, l, 10));
    expect(handles).not.toContain(REFUSED);
    expect(a.open).toBe(6);
    // The six clients behind the one balancer: each its own place.
    for (let i = 0; i < 6; i++) expect(a.client(`203.0.113.${i + 1}`, l)).not.toBe(REFUSED);
  });

  it('client counts one client through several balancer connections; a refusal takes nothing', () => {
    const a = make();
    const x = a.listener('x');
    const taken: number[] = [];
    for (let i = 0; i < 3; i++) {
      a.admit(x, undefined, l, undefined);
      taken.push(a.client('203.0.113.9', l));
    }
    expect(taken).not.toContain(REFUSED);
    a.admit(x, undefined, l, undefined);
    expect(a.client('203.0.113.9', l)).toBe(REFUSED);
    // Refused after the header: the connection gives back only what admit took.
    a.release(x, '203.0.113.9', 0);
    expect(a.open).toBe(3);
    a.release(x, '203.0.113.9', taken[0]!);
    a.admit(x, undefined, l, undefined);
    expect(a.client('203.0.113.9', l)).not.toBe(REFUSED);
  });

  it('one IPv6 host rotating through its /64 is one client', () => {
    const a = make();
    const x = a.listener('x');
    let admitted = 0;
    for (let i = 1; i <= 10; i++) {
      const key = clientKey(`2001:db8:1:2::${i.toString(16)}`, l.clientIpv6Prefix);
      if (a.admit(x, key, l, undefined) !== REFUSED) admitted++;
    }
    expect(admitted).toBe(3);
    expect(a.admit(x, clientKey('2001:db8:1:3::1', l.clientIpv6Prefix), l, undefined)).not.toBe(REFUSED);
  });
});
