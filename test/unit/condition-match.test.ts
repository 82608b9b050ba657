/**
 * Match behaviour: the conformance table of reference bfe.md §2.2 (rows cited), then the
 * per-primitive semantics of §1.5/§1.6 that the table does not cover.
 */
import { describe, expect, it } from 'vitest';
import { compileCondition } from '../../src/condition/index.ts';
import type { Request } from '../../src/contracts/types.ts';
import { type FakeRequestInit, fakeRequest } from './condition-fixtures.ts';

const where = 'rules[0].cond';
const tls = (clientAuth: boolean, clientCaNames: string[] = []) => ({ clientAuth, clientCaNames });

// [source row, condition, request fields, expected, clock (ms) or undefined]
type Row = readonly [string, string, FakeRequestInit, boolean, number?];

const bfeRows: readonly Row[] = [
  ['§2.2#41', 'req_vip_in("1.1.1.1|2001:DB8:2de::e13")', { vip: '1.1.1.1' }, true],
  ['§2.2#41', 'req_vip_in("1.1.1.1|2001:DB8:2de::e13")', { vip: '2001:0DB8:02de:0::e13' }, true],
  ['§2.2#41', 'req_vip_in("1.1.1.1|2001:DB8:2de::e13")', { vip: '2002:0DB8:02de:0::e13' }, false],
  ['§2.2#42', 'req_vip_range("1.1.1.1","4.4.4.4")', { vip: '3.255.255.255' }, true],
  ['§2.2#43', 'req_vip_range("2001:0DB8:02de:0::e13","2002:0DB8:02de:0::e13")', { vip: '2001:ffff::ffff' }, true],
  ['§2.2#44', 'req_cip_range("2001:DB8:2de::e13","2004:DB8:2de::e13")', { clientIp: '2002:DB8:2de::e13' }, true],
  ['§2.2#44', 'req_cip_range("2001:DB8:2de::e13","2004:DB8:2de::e13")', { clientIp: '2001:DB8:2de:333::111' }, true],
  ['§2.2#44', 'req_cip_range("2001:DB8:2de::e13","2004:DB8:2de::e13")', { clientIp: '2004:DB8:2de:33f::113' }, false],
  [
    '§2.2#45',
    'req_header_value_hash_in("X-Bfe-Uid","4073|5000-9999",true)',
    { headers: { 'X-Bfe-Uid': 'TEST-uid-0001' } },
    true,
  ],
  [
    '§2.2#45',
    'req_header_value_hash_in("X-Bfe-Uid","4073|5000-9999",true)',
    { headers: { 'X-Bfe-Uid': 'test-uid-0002' } },
    true,
  ],
  [
    '§2.2#45',
    'req_header_value_hash_in("X-Bfe-Uid","4073|5000-9999",true)',
    { headers: { 'X-Bfe-Uid': 'test-uid-0003' } },
    false,
  ],
  [
    '§2.2#45',
    'req_header_value_hash_in("X-Bfe-Uid","4073|5000-9999",true)',
    { headers: { 'X-Bfe-Uid': 'test-uid-0004' } },
    true,
  ],
  ['§2.2#46', 'ses_tls_sni_in("test.com")', { secure: true, protocol: 'tls', sni: 'test.com' }, true],
  ['§2.2#46', 'ses_tls_sni_in("test.com")', { secure: false, sni: 'test.com' }, false],
  ['§2.2#47', 'ses_tls_client_auth()', { secure: true, tls: tls(true) }, true],
  ['§2.2#47', 'ses_tls_client_auth()', { secure: true, tls: tls(false) }, false],
  ['§2.2#48', 'ses_tls_client_ca_in("clientCa")', { secure: true, tls: tls(true, ['clientCa']) }, true],
  ['§2.2#48', 'ses_tls_client_ca_in("clientCa")', { secure: true, tls: tls(false, ['clientCa']) }, false],
  [
    '§2.2#50 (host lower-cased by the peeker)',
    'req_host_in("www.baidu.com|map.baidu.com")',
    { host: 'www.baidu.com' },
    true,
  ],
  ['§2.2#50', 'req_host_in("www.baidu.com|map.baidu.com")', { host: 'map.baidu.com' }, true],
  ['§2.2#50', 'req_host_in("www.baidu.com|map.baidu.com")', { host: 'abc.baidu.com' }, false],
  ['§2.2#50 (port stripped)', 'req_host_in("WWW.baidu.com")', { host: 'www.baidu.com', port: 80 }, true],
  ['§2.2#51', 'req_path_contain("yingwen|中文|%e4%b8%ad%e6%96%87|YINGWEN", false)', { path: '/yingwen' }, true],
  ['§2.2#51', 'req_path_contain("yingwen|中文|%e4%b8%ad%e6%96%87|YINGWEN", false)', { path: '/Yingwen' }, false],
  ['§2.2#51', 'req_path_contain("yingwen|中文|%e4%b8%ad%e6%96%87|YINGWEN", false)', { path: '/hi，中文' }, true],
  ['§2.2#51', 'req_path_contain("yingwen|中文|%e4%b8%ad%e6%96%87|YINGWEN", false)', { path: '/文' }, false],
  ['§2.2#51', 'req_path_contain("yingwen|中文|%e4%b8%ad%e6%96%87|YINGWEN", true)', { path: '/Yingwen' }, true],
  ['§2.2#52', 'req_path_element_prefix_in("/path|/path/ab", true)', { path: '/path/a/c' }, true],
  ['§2.2#52', 'req_path_element_prefix_in("/path|/path/ab", true)', { path: '/path/ab' }, true],
  ['§2.2#52', 'req_path_element_prefix_in("/path|/path/ab", true)', { path: '/pathabc' }, false],
  ['§2.2#52', 'req_path_element_prefix_in("/path|/path/ab", true)', { path: '/PATH' }, true],
  ['§2.2#53', 'bfe_time_range("20190204200000H","20190205010000H")', {}, false, Date.UTC(2019, 1, 4, 11, 59, 59)],
  ['§2.2#53', 'bfe_time_range("20190204200000H","20190205010000H")', {}, true, Date.UTC(2019, 1, 4, 12, 0, 0)],
  ['§2.2#53', 'bfe_time_range("20190204200000H","20190205010000H")', {}, true, Date.UTC(2019, 1, 4, 17, 0, 0, 999)],
  ['§2.2#53', 'bfe_time_range("20190204200000H","20190205010000H")', {}, false, Date.UTC(2019, 1, 4, 17, 0, 1)],
  ['§2.2#54', 'bfe_periodic_time_range("200000H","213000H","")', {}, true, Date.UTC(2019, 1, 4, 12, 0, 0)],
  ['§2.2#54', 'bfe_periodic_time_range("200000H","213000H","")', {}, true, Date.UTC(2019, 1, 4, 13, 30, 0)],
  ['§2.2#54', 'bfe_periodic_time_range("200000H","213000H","")', {}, false, Date.UTC(2019, 1, 4, 13, 30, 1)],
  ['§2.2#54', 'bfe_periodic_time_range("200000H","213000H","")', {}, false, Date.UTC(2019, 1, 4, 11, 59, 59)],
];

const semanticRows: readonly Row[] = [
  ['§1.6 host suffix has no label boundary', 'req_host_suffix_in("example.com")', { host: 'badexample.com' }, true],
  ['§1.6 host suffix', 'req_host_suffix_in(".example.com")', { host: 'badexample.com' }, false],
  ['§1.6 host regmatch', 'req_host_regmatch(`^api\\.`)', { host: 'api.example.test' }, true],
  ['§1.6 port defaults to 80', 'req_port_in("80")', { port: undefined, secure: true }, true],
  ['§1.6 port', 'req_port_in("8080|8443")', { port: 8443 }, true],
  ['§1.6 port', 'req_port_in("8080")', { port: 80 }, false],
  ['§1.6 path exact, case-sensitive', 'req_path_in("/ABC", false)', { path: '/abc' }, false],
  ['§2.1#11 path exact, folded', 'req_path_in("/abc", true)', { path: '/ABC' }, true],
  ['§1.6 path prefix, no boundary', 'req_path_prefix_in("/api", false)', { path: '/apix' }, true],
  ['§1.6 path suffix', 'req_path_suffix_in(".jpg|.png", true)', { path: '/a/B.PNG' }, true],
  ['§1.6 path regmatch unanchored', 'req_path_regmatch(`/a/\\d+`)', { path: '/x/a/12/y' }, true],
  ['DESIGN: no path on TLS passthrough', 'req_path_prefix_in("/", false)', { path: undefined, protocol: 'tls' }, false],
  ['DESIGN: no path on TLS passthrough', '!req_path_prefix_in("/", false)', { path: undefined, protocol: 'tls' }, true],
  ['§1.6 url regmatch sees the raw target', 'req_url_regmatch(`\\?id=1`)', { target: '/a?id=1' }, true],
  ['§1.6 query key', 'req_query_key_in("a|b")', { query: 'x=1&b=2' }, true],
  ['§1.6 query key (case-sensitive)', 'req_query_key_in("B")', { query: 'b=2' }, false],
  ['§1.6 query key prefix', 'req_query_key_prefix_in("utm_")', { query: 'x=1&utm_source=a' }, true],
  ['§1.6 query key prefix (decoded keys)', 'req_query_key_prefix_in("utm_")', { query: 'utm%5Fsource=a' }, true],
  ['§1.6 query key prefix', 'req_query_key_prefix_in("utm_")', { query: 'x=utm_' }, false],
  ['§1.6 query exist', 'req_query_exist()', { query: 'a' }, true],
  ['§1.6 query exist: bare ? is false', 'req_query_exist()', { query: '' }, false],
  ['§1.6 query exist: only separators', 'req_query_exist()', { query: '&&' }, false],
  ['§1.6 query value first', 'req_query_value_in("a", "1", false)', { query: 'a=1&a=2' }, true],
  ['§1.5 missing query key fetches ""', 'req_query_value_in("a", "x|", false)', { query: 'b=1' }, true],
  ['§1.6 query value prefix ci', 'req_query_value_prefix_in("a", "AB", true)', { query: 'a=abc' }, true],
  ['§1.6 query value suffix', 'req_query_value_suffix_in("a", "bc", false)', { query: 'a=abc' }, true],
  ['§1.6 query value contain', 'req_query_value_contain("a", "b", false)', { query: 'a=abc' }, true],
  ['§1.6 query value regmatch', 'req_query_value_regmatch("a", `^\\d+$`)', { query: 'a=123' }, true],
  ['§1.6 query value hash', 'req_query_value_hash_in("uid", "4073", false)', { query: 'uid=test-uid-0002' }, true],
  ['§1.5 hash ci lower-cases', 'req_query_value_hash_in("uid", "4073", true)', { query: 'uid=TEST-UID-0002' }, true],
  [
    '§1.5 hash without ci keeps case',
    'req_query_value_hash_in("uid", "4073", false)',
    { query: 'uid=TEST-UID-0002' },
    false,
  ],
  ['§1.6 header key needs a non-empty value', 'req_header_key_in("X-A")', { headers: { 'X-A': '' } }, false],
  ['§1.6 header key', 'req_header_key_in("X-B|X-A")', { headers: { 'x-a': '1' } }, true],
  ['§1.6 header value first value', 'req_header_value_in("X-A", "1", false)', { headers: { 'X-A': ['1', '2'] } }, true],
  ['§1.5 missing header fetches ""', 'req_header_value_in("X-A", "", false)', {}, true],
  ['§1.5 lists are not trimmed', 'req_header_value_in("X-A", "a | b", false)', { headers: { 'X-A': 'b' } }, false],
  ['§1.5 lists are not trimmed', 'req_header_value_in("X-A", "a | b", false)', { headers: { 'X-A': ' b' } }, true],
  ['§1.6 header prefix', 'req_header_value_prefix_in("X-A", "ab", false)', { headers: { 'X-A': 'abc' } }, true],
  ['§1.6 header suffix', 'req_header_value_suffix_in("X-A", "BC", true)', { headers: { 'X-A': 'abc' } }, true],
  ['§1.6 header contain', 'req_header_value_contain("X-A", "z", false)', { headers: { 'X-A': 'abc' } }, false],
  ['§1.6 header regmatch', 'req_header_value_regmatch("X-A", `(?i)^ABC$`)', { headers: { 'X-A': 'abc' } }, true],
  ['§1.6 ua regmatch', 'req_ua_regmatch(`curl/`)', { headers: { 'User-Agent': 'curl/8.0' } }, true],
  ['§1.6 cookie key', 'req_cookie_key_in("sid")', { headers: { Cookie: 'a=1; sid=x' } }, true],
  ['§1.6 cookie value', 'req_cookie_value_in("sid", "x", false)', { headers: { Cookie: 'sid=x' } }, true],
  ['§1.5 missing cookie is false', 'req_cookie_value_in("sid", "", false)', {}, false],
  ['§1.5 missing cookie is false, ! makes true', '!req_cookie_value_in("sid", "", false)', {}, true],
  [
    '§1.6 cookie prefix/suffix/contain',
    'req_cookie_value_prefix_in("s","a",false) && req_cookie_value_suffix_in("s","c",false) && req_cookie_value_contain("s","b",false)',
    { headers: { Cookie: 's=abc' } },
    true,
  ],
  [
    '§1.6 cookie hash',
    'req_cookie_value_hash_in("s", "4055", false)',
    { headers: { Cookie: 's=test-uid-0003' } },
    true,
  ],
  ['§1.6 method always ci', 'req_method_in("get|post")', { method: 'POST' }, true],
  ['§1.6 method absent on TLS', 'req_method_in("GET")', { method: undefined }, false],
  ['§1.6 proto on plaintext is the HTTP version', 'req_proto_match("http/1.1")', {}, true],
  ['§1.6 proto is not a list', 'req_proto_match("https|h2")', { secure: true, protocol: 'h2' }, false],
  ['§1.6 proto on TLS', 'req_proto_match("h2")', { secure: true, protocol: 'h2' }, true],
  ['§1.6 proto on TLS', 'req_proto_match("HTTPS")', { secure: true, protocol: 'http1' }, true],
  ['§1.6 proto secure', 'req_proto_secure()', { secure: true }, true],
  ['§1.6 cip range v4', 'req_cip_range("10.0.0.0","10.255.255.255")', { clientIp: '10.1.2.3' }, true],
  [
    'src/base/ip.ts: IPv4-mapped client is IPv4',
    'req_cip_range("10.0.0.0","10.255.255.255")',
    { clientIp: '::ffff:10.1.2.3' },
    true,
  ],
  ['src/base/ip.ts: families never mix', 'req_cip_range("::","ffff::")', { clientIp: '10.1.2.3' }, false],
  ['§1.6 cip hash of the string form', 'req_cip_hash_in("0-9999")', { clientIp: '::ffff:10.1.2.3' }, true],
  ['§1.6 cip trusted', 'req_cip_trusted()', { trustedClient: true }, true],
  ['§1.6 cip trusted', 'req_cip_trusted()', {}, false],
  ['§1.6 sip range', 'ses_sip_range("192.0.2.0","192.0.2.255")', { clientIp: '192.0.2.77' }, true],
  ['§1.6 vip absent without PROXY', 'req_vip_in("1.1.1.1")', { vip: undefined }, false],
  ['§1.6 vip absent without PROXY', 'ses_vip_range("0.0.0.0","255.255.255.255")', { vip: undefined }, false],
  ['§1.6 sni ci', 'ses_tls_sni_in("Test.com")', { secure: true, sni: 'TEST.com' }, true],
  ['§1.6 sni absent', 'ses_tls_sni_in("test.com")', { secure: true, sni: undefined }, false],
  [
    '§1.6 client CA is case-sensitive',
    'ses_tls_client_ca_in("clientca")',
    { secure: true, tls: tls(true, ['clientCa']) },
    false,
  ],
  ['issue: alpn offered', 'ses_tls_alpn_in("h2|http/1.1")', { secure: true, alpn: ['h2'] }, true],
  ['issue: alpn offered', 'ses_tls_alpn_in("h2")', { secure: true, alpn: ['http/1.1'] }, false],
  ['issue: alpn offered', 'ses_tls_alpn_in("h2")', {}, false],
  ['§1.6 default_t', 'default_t()', {}, true],
  ['§1.2 !', '!default_t()', {}, false],
  ['§1.2 parentheses', '!(default_t() && !default_t())', {}, true],
];

/** Compiles and evaluates one row. */
function evaluate(source: string, init: FakeRequestInit, now?: number): boolean {
  return compileCondition(source, now === undefined ? { where } : { where, now: () => now })(fakeRequest(init));
}

describe('condition match (bfe.md §2.2)', () => {
  for (const [src, source, init, expected, now] of bfeRows) {
    it(`${src}: ${source} → ${expected}`, () => {
      expect(evaluate(source, init, now)).toBe(expected);
    });
  }

  it('§2.2#49: req_host_tag_in reads the host table tag', () => {
    const tags: Record<string, string> = { a: 'host_tag1', b: 'host_tag2', c: 'host_tag3' };
    const c = compileCondition('req_host_tag_in("host_tag1|host_tag2")', { where, hostTag: (h) => tags[h] });
    expect(['a', 'b', 'c', 'd'].map((host) => c(fakeRequest({ host })))).toEqual([true, true, false, false]);
    // Without a host table the primitive is false (e.g. flat books).
    expect(compileCondition('req_host_tag_in("host_tag1")', { where })(fakeRequest({ host: 'a' }))).toBe(false);
  });

  it('§2.2#55-57: body primitives are refused, not evaluated', () => {
    expect(() => compileCondition('req_body_json_prefix_in("model","openrouter/",false)', { where })).toThrow(
      /not available when routing on the request head/,
    );
  });
});

describe('condition semantics (bfe.md §1.5, §1.6)', () => {
  for (const [src, source, init, expected] of semanticRows) {
    it(`${src}: ${source} → ${expected}`, () => {
      expect(evaluate(source, init)).toBe(expected);
    });
  }

  it('§1.6: X-Bfe-Debug-Time is ignored', () => {
    const c = compileCondition('bfe_time_range("20190204200000H","20190205010000H")', {
      where,
      now: () => Date.UTC(2030, 0, 1),
    });
    expect(c(fakeRequest({ headers: { 'X-Bfe-Debug-Time': '20190204220000H' } }))).toBe(false);
  });

  it('§1.2: && and || short-circuit', () => {
    let calls = 0;
    const hostTag = (): string => {
      calls++;
      return 't';
    };
    const req: Request = fakeRequest();
    compileCondition('default_t() || req_host_tag_in("t")', { where, hostTag })(req);
    compileCondition('!default_t() && req_host_tag_in("t")', { where, hostTag })(req);
    expect(calls).toBe(0);
    compileCondition('default_t() && req_host_tag_in("t")', { where, hostTag })(req);
    expect(calls).toBe(1);
  });

  it('time uses the injected clock at evaluation, not at compile', () => {
    let now = Date.UTC(2019, 1, 4, 12);
    const c = compileCondition('bfe_periodic_time_range("200000H","213000H","")', { where, now: () => now });
    expect(c(fakeRequest())).toBe(true);
    now = Date.UTC(2019, 1, 4, 14);
    expect(c(fakeRequest())).toBe(false);
  });

  it('a west zone letter shifts the daily window (N = UTC-1)', () => {
    const c = compileCondition('bfe_periodic_time_range("000000N","005959N","")', {
      where,
      now: () => Date.UTC(2019, 1, 4, 1, 30),
    });
    expect(c(fakeRequest())).toBe(true);
  });
});
