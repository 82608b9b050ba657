/**
 * The primitives added for policies (issue 42): `req_cip_cidr_in` and `ses_sip_cidr_in` (CIDR
 * lists over the client and the session address) and `ses_listener_in` (the accepting listener).
 */
import { describe, expect, it } from 'vitest';
import { compileCondition } from '../../src/condition/index.ts';
import { type FakeRequestInit, fakeRequest } from './condition-fixtures.ts';

const where = 'policies[0].when';
const rows: readonly (readonly [string, FakeRequestInit, boolean])[] = [
  ['req_cip_cidr_in("10.0.0.0/8|192.0.2.1")', { clientIp: '10.200.0.1' }, true],
  ['req_cip_cidr_in("10.0.0.0/8|192.0.2.1")', { clientIp: '192.0.2.1' }, true],
  ['req_cip_cidr_in("10.0.0.0/8|192.0.2.1")', { clientIp: '192.0.2.2' }, false],
  ['req_cip_cidr_in("10.0.0.0/8")', { clientIp: '::ffff:10.0.0.1' }, true],
  ['req_cip_cidr_in("::/0")', { clientIp: '10.0.0.1' }, false],
  ['req_cip_cidr_in("2001:db8::/32")', { clientIp: '2001:db8:ff::1' }, true],
  ['req_cip_cidr_in("10.0.0.0/8")', { clientIp: 'garbage' }, false],
  // The session address is the PROXY source / socket peer, never a forwarded header's.
  ['ses_sip_cidr_in("10.0.0.0/8")', { clientIp: '192.0.2.1', sessionIp: '10.0.0.5' }, true],
  ['ses_sip_cidr_in("10.0.0.0/8")', { clientIp: '10.0.0.5', sessionIp: '192.0.2.1' }, false],
  ['ses_sip_cidr_in("10.0.0.0/8")', { clientIp: '10.0.0.5' }, true],
  ['ses_listener_in("public|edge")', { listener: 'edge' }, true],
  ['ses_listener_in("public|edge")', { listener: 'Edge' }, false],
  ['!ses_listener_in("internal")', { listener: 'public' }, true],
];

describe('session primitives for policies', () => {
  it.each(rows)('%s on %j → %s', (source, init, expected) => {
    expect(compileCondition(source, { where })(fakeRequest(init))).toBe(expected);
  });

  it('a bad CIDR is refused at compile, pointing at the argument', () => {
    expect(() => compileCondition('req_cip_cidr_in("10.0.0.0/33")', { where })).toThrow(
      'policies[0].when: column 17: req_cip_cidr_in: bad CIDR "10.0.0.0/33" (expected addr/prefix or an address)',
    );
  });
});
