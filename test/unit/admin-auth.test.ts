/**
 * app/admin/auth.ts: the loopback judgement, `Host` parsing, the constant-time bearer check, the
 * `admin:` schema, and the order of refusals (issue 17 item 8). The integration test
 * (test/integration/admin.test.ts) runs the same rules over real HTTP.
 */
import { describe, expect, it } from 'vitest';
import {
  type AdminPolicy,
  type AdminRequest,
  hostNameOf,
  isLoopback,
  refusal,
  tokenMatches,
} from '../../app/admin/auth.ts';
import { adminSchema } from '../../src/config/schema.ts';

// [source, bound host, loopback]
const loopbackRows: ReadonlyArray<readonly [string, string, boolean]> = [
  ['RFC 1122 §3.2.1.3 127/8', '127.0.0.1', true],
  ['RFC 1122 §3.2.1.3 127/8', '127.0.0.2', true],
  ['RFC 1122 §3.2.1.3 127/8', '127.255.255.254', true],
  ['RFC 4291 §2.5.3', '::1', true],
  ['RFC 4291 §2.5.3 full form', '0:0:0:0:0:0:0:1', true],
  ['RFC 4291 §2.5.5.2 IPv4-mapped', '::ffff:127.0.0.1', true],
  ['RFC 6761 §6.3 localhost', 'localhost', true],
  ['wildcard: every interface', '0.0.0.0', false],
  ['wildcard: every interface', '::', false],
  ['private address', '10.0.0.5', false],
  ['a name is not judged by DNS', 'admin.internal', false],
  ['not 127/8', '128.0.0.1', false],
];

// [source, Host value, host name or undefined when malformed]
const hostRows: ReadonlyArray<readonly [string, string, string | undefined]> = [
  ['RFC 9110 §7.2 name', 'localhost', 'localhost'],
  ['RFC 9110 §7.2 name:port', 'LocalHost:9901', 'localhost'],
  ['RFC 3986 §3.2.2 IPv4', '127.0.0.1:9901', '127.0.0.1'],
  ['RFC 3986 §3.2.2 IP-literal', '[::1]:9901', '::1'],
  ['RFC 3986 §3.2.2 IP-literal, no port', '[::1]', '::1'],
  ['RFC 3986 §3.2.2 bare IPv6 is not a Host', '::1', undefined],
  ['RFC 3986 §3.2.2 bracket not an IPv6', '[evil.test]:80', undefined],
  ['RFC 3986 §3.2.3 port is digits', 'a.test:80x', undefined],
  ['RFC 3986 §3.2.3 empty port', 'a.test:', undefined],
  ['empty', '', undefined],
  ['port only', ':9901', undefined],
  ['unclosed bracket', '[::1', undefined],
];

// [case, Authorization, token, matches]
const tokenRows: ReadonlyArray<readonly [string, string | undefined, string, boolean]> = [
  ['RFC 6750 §2.1', 'Bearer s3cret', 's3cret', true],
  ['RFC 9110 §11.1 scheme is case-insensitive', 'bearer s3cret', 's3cret', true],
  ['RFC 6750 §2.1 trailing space', 'Bearer s3cret ', 's3cret', true],
  ['wrong token', 'Bearer s3cres', 's3cret', false],
  ['prefix of the token', 'Bearer s3cre', 's3cret', false],
  ['token plus more', 'Bearer s3crets', 's3cret', false],
  ['another scheme', 'Basic s3cret', 's3cret', false],
  ['no scheme', 's3cret', 's3cret', false],
  ['absent', undefined, 's3cret', false],
  ['empty bearer', 'Bearer ', 's3cret', false],
  ['no token configured never matches', 'Bearer ', '', false],
];

const policy: AdminPolicy = {
  token: 's3cret',
  loopback: true,
  address: '127.0.0.1:9901',
  open: ['/healthz', '/readyz'],
  allowedHosts: ['admin.internal'],
};

const req = (method: string, path: string, headers: Record<string, string | string[]>): AdminRequest => ({
  method,
  path,
  headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])),
});
const good = { host: '127.0.0.1:9901', authorization: 'Bearer s3cret', 'content-type': 'application/json' };

// [rule, request, policy change, expected code or undefined when allowed]
const refusalRows: ReadonlyArray<readonly [string, AdminRequest, Partial<AdminPolicy>, string | undefined]> = [
  ['1 open path: no token, any Host', req('GET', '/healthz', { host: 'evil.test' }), {}, undefined],
  ['1 open path: no Host at all', req('GET', '/readyz', {}), {}, undefined],
  ['1 open is for reads only', req('POST', '/healthz', { host: 'evil.test' }), {}, 'host_not_allowed'],
  ['2 foreign name', req('GET', '/routes', { ...good, host: 'evil.test:9901' }), {}, 'host_not_allowed'],
  ['2 rebinding-style name', req('GET', '/routes', { ...good, host: '127.0.0.1.nip.io' }), {}, 'host_not_allowed'],
  ['2 trailing-dot localhost', req('GET', '/routes', { ...good, host: 'localhost.' }), {}, 'host_not_allowed'],
  ['2 no Host', req('GET', '/routes', { authorization: good.authorization }), {}, 'host_not_allowed'],
  ['2 Host twice', req('GET', '/routes', { ...good, host: ['127.0.0.1', 'evil.test'] }), {}, 'host_not_allowed'],
  ['2 allowed name', req('GET', '/routes', { ...good, host: 'admin.internal:9901' }), {}, undefined],
  ['2 any IP literal', req('GET', '/routes', { ...good, host: '[2001:db8::1]:9901' }), {}, undefined],
  ['3 cross-site Origin', req('POST', '/reload', { ...good, origin: 'http://evil.test' }), {}, 'cross_origin'],
  ['3 Origin null', req('POST', '/reload', { ...good, origin: 'null' }), {}, 'cross_origin'],
  [
    '3 Origin on another port',
    req('POST', '/reload', { ...good, origin: 'http://127.0.0.1:8080' }),
    {},
    'cross_origin',
  ],
  ['3 Origin twice', req('POST', '/reload', { ...good, origin: [good.host, good.host] }), {}, 'cross_origin'],
  ['3 same Origin', req('POST', '/reload', { ...good, origin: 'http://127.0.0.1:9901' }), {}, undefined],
  [
    '3 Fetch Metadata same-site',
    req('POST', '/reload', { ...good, 'sec-fetch-site': 'same-site' }),
    {},
    'cross_origin',
  ],
  ['3 Fetch Metadata none', req('POST', '/reload', { ...good, 'sec-fetch-site': 'none' }), {}, undefined],
  ['3 reads ignore Origin', req('GET', '/routes', { ...good, origin: 'http://evil.test' }), {}, undefined],
  ['4 no token sent', req('GET', '/routes', { host: good.host }), {}, 'unauthorized'],
  ['4 no token set, loopback', req('POST', '/reload', { ...good, authorization: '' }), { token: '' }, undefined],
  [
    '4 no token set, not loopback',
    req('GET', '/version', { host: good.host }),
    { token: '', loopback: false },
    'unauthorized',
  ],
  [
    '5 text/plain (CORS-safelisted)',
    req('POST', '/reload', { ...good, 'content-type': 'text/plain' }),
    {},
    'unsupported_media_type',
  ],
  [
    '5 no content type',
    req('POST', '/reload', { host: good.host, authorization: good.authorization }),
    {},
    'unsupported_media_type',
  ],
  [
    '5 JSON with parameters',
    req('POST', '/reload', { ...good, 'content-type': 'Application/JSON; charset=utf-8' }),
    {},
    undefined,
  ],
  [
    '5 reads need no content type',
    req('GET', '/routes', { host: good.host, authorization: good.authorization }),
    {},
    undefined,
  ],
];

describe('admin auth', () => {
  it.each(loopbackRows)('isLoopback: %s: %s → %s', (_source, host, want) => {
    expect(isLoopback(host)).toBe(want);
  });

  it.each(hostRows)('hostNameOf: %s: %j → %j', (_source, value, want) => {
    expect(hostNameOf(value)).toBe(want);
  });

  it.each(tokenRows)('tokenMatches: %s', (_case, authorization, token, want) => {
    expect(tokenMatches(authorization, token)).toBe(want);
  });

  it.each(refusalRows)('refusal: step %s', (_rule, request, change, want) => {
    expect(refusal(request, { ...policy, ...change })?.code).toBe(want);
  });

  it('the admin schema: defaults, open paths limited to reads, host names without port', () => {
    expect(adminSchema.parse({})).toEqual({
      address: { host: '127.0.0.1', port: 9901 },
      token: '',
      open: ['/healthz', '/readyz'],
      allowedHosts: [],
      maxConnections: 64,
      maxConnectionsPerClient: 16,
      headersTimeout: 5_000,
      requestTimeout: 10_000,
      idleTimeout: 15_000,
    });
    expect(adminSchema.parse({ allowedHosts: ['Admin.Internal'] }).allowedHosts).toEqual(['admin.internal']);
    for (const bad of [
      { open: ['/reload'] },
      { open: ['/nope'] },
      { allowedHosts: ['a.test:80'] },
      { allowedHosts: ['http://a.test'] },
      { allowedHosts: ['a..test'] },
    ]) {
      expect(adminSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});
