/**
 * Conformance table of reference bfe.md §2.1 (syntax and build), one row per case, each citing
 * its row; rows 5, 23 and 24 are adapted: we refuse `&&` and `||` mixed without parentheses.
 */
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { compileCondition } from '../../src/condition/index.ts';
import { parse } from '../../src/condition/parser.ts';
import { fakeRequest } from './condition-fixtures.ts';

const WHERE = 'addressBook.products.web.rules[2].cond';

/** Compiles, returning the error message (or 'ok'). */
function outcome(source: string): string {
  try {
    compileCondition(source, { where: WHERE });
    return 'ok';
  } catch (e) {
    if (!isSwitchboardError(e) || e.code !== 'SWB_ERR_CONDITION') throw e;
    expect(e.message.startsWith(`${WHERE}: `)).toBe(true);
    return e.message.slice(WHERE.length + 2);
  }
}

const P = 'req_path_prefix_in("/static/", true)';
// [source row, expression, 'ok' or a pattern the error must match]
const rows: ReadonlyArray<readonly [string, string, 'ok' | RegExp]> = [
  [
    '§2.1#1',
    `${P}&&req_cookie_value_in("BUID", "TEST") && req_host_in(true) && x`,
    /column 39: req_cookie_value_in expects 3 arguments \(name, list, fold\), got 2/,
  ],
  [
    '§2.1#2',
    `${P}&&req_cookie_value_in("BUID","TEST",true) && req_host_in(true) && x`,
    /req_host_in argument 1 \(hosts\) expects a string, got a boolean/,
  ],
  ['§2.1#3', `${P}&&req_cookie_value_in("BUID","TEST",true) && req_host_in("xxx") && x`, /unresolved variable 'x'/],
  ['§2.1#4', `${P}&&x&&req_host_in("xxx")&& x`, /column 39: unresolved variable 'x'/],
  [
    '§2.1#5 (adapted: mixed)',
    `!${P}&&!x&&!req_cookie_value_in("BUID","TEST",true)||!req_host_in("xxx") && !x`,
    /'&&' and '\|\|' mixed without parentheses/,
  ],
  ['§2.1#7', 'req_path_in1', /column 1: unresolved variable 'req_path_in1'/],
  ['§2.1#8', 'a && b', /unresolved variable 'a'/],
  ['§2.1#9', 'req_path_in("notbool")', /req_path_in expects 2 arguments \(list, fold\), got 1/],
  ['§2.1#10', 'req_path_in("/ABC", false)', 'ok'],
  ['§2.1#11', 'req_path_in("/abc", true)', 'ok'],
  ['§2.1#12', 'req_path_element_prefix_in("/abc", true)', 'ok'],
  ['§2.1#13', 'req_url_regmatch("123")', 'ok'],
  ['§2.1#13', 'req_url_regmatch(`123`)', 'ok'],
  ['§2.1#14', 'req_vip_in("1.1.1.1|2001::DB8:2de::e13")', /column 12: req_vip_in: bad IP address "2001::DB8:2de::e13"/],
  [
    '§2.1#15',
    'req_cip_range("1.1.1.1", "1.1.1.0")',
    /column 26: req_cip_range: range start 1.1.1.1 is after end 1.1.1.0/,
  ],
  ['§2.1#16', 'req_cip_range("1.1.1", "1.1.1.0")', /column 15: req_cip_range: bad IP address "1.1.1"/],
  ['§2.1#17', 'req_cip_range("1.1.1.1", "2001:DB8:2de::e13")', /range mixes IPv4 and IPv6/],
  ['§2.1#18', 'req_cip_range("2002:DB8:2de::e13", "2001:DB8:2de::e13")', /range start 2002:db8:2de::e13 is after end/],
  ['§2.1#19', 'req_header_value_hash_in("X-Bfe-Uid", "abc", true)', /bad bucket list "abc": "abc" is not a number/],
  ['§2.1#20', 'req_header_value_hash_in("X-Bfe-Uid", "100-200|300-", true)', /bad bucket list .*"" is not a number/],
  ['§2.1#20', 'req_header_value_hash_in("X-Bfe-Uid", "100-200|300-400-500", true)', /more than one '-'/],
  ['§2.1#20', 'req_header_value_hash_in("X-Bfe-Uid", "100-10000", true)', /10000 is out of range/],
  ['§2.1#20', 'req_header_value_hash_in("X-Bfe-Uid", "100-99", true)', /range 100-99 is reversed/],
  [
    '§2.1#21',
    'req_host_in("www.baidu.com:80|map.baidu.com")',
    /port should not be included in host "www.baidu.com:80"/,
  ],
  ['§2.1#22', 'bfe_periodic_time_range("200000R","213000H","")', /same zone letter/],
  ['§2.1#22', 'bfe_periodic_time_range("220000H","213000H","")', /start 220000H is after end 213000H/],
  ['§2.1#22', 'bfe_periodic_time_range("200000H","213000H","Monday")', /column 45: .*period must be ""/],
  ['§2.1#23 (adapted: mixed)', 'default_t() && default_t() || default_t()', /column 28: '&&' and '\|\|' mixed/],
  ['§2.1#23 parenthesised', 'default_t() && (default_t() || default_t())', 'ok'],
  ['§2.1#24 (adapted: mixed)', 'default_t() || default_t() && default_t()', /'\|\|' and '&&' mixed/],
  ['§2.1#24 parenthesised', '(default_t() || default_t()) && default_t()', 'ok'],
  ['§2.1#26', "req_host_in('a.com')", /column 13: unrecognized token/],
  ['§2.1#27', 'req_path_regmatch("/a/\\d+")', /column 23: unknown escape sequence '\\d'/],
  ['§2.1#27', 'req_path_regmatch(`/a/\\d+`)', 'ok'],
  ['§2.1#28', 'req_host_in("a\\"b.com")', 'ok'],
  ['§2.1#29', 'req_path_in("/a", TRUE)', /column 19: expected a string, true or false, got 'TRUE'/],
  ['§2.1#30', 'req_path_in("/a", 1)', /argument 2 \(fold\) expects true or false, got an integer/],
  ['§2.1#30', 'req_path_in("/a","true")', /argument 2 \(fold\) expects true or false, got a string/],
  ['§2.1#31', 'default_t', /unresolved variable 'default_t'/],
  ['§2.1#31', 'default_t(true)', /default_t expects no arguments, got 1/],
  ['§2.1#32', 'func()', /keyword can't be used: 'func'/],
  ['§2.1#32', 'default()', /keyword can't be used: 'default'/],
  ['§2.1#33', 'x & y', /column 3: illegal token '&'/],
  ['§2.1#33', 'x | y', /column 3: illegal token '\|'/],
  [
    '§2.1#34',
    'req_host_in("a.com") and req_method_in("GET")',
    /column 22: expected '&&', '\|\|' or end of input, got 'and'/,
  ],
  ['§2.1#35', 'req_host_in("a.com");', /column 21: unrecognized token ';'/],
  ['§2.1#35', 'req_host_in("a.com",)', /column 21: expected a string, true or false, got '\)'/],
  ['§2.1#35', '(req_host_in("a.com")', /expected '\)' or an operator, got end of input/],
  ['§2.1#35', 'req_host_in("a.com"))', /column 21: expected '&&', '\|\|' or end of input, got '\)'/],
  ['§2.1#36', 'req_host_in("a.com") // c', 'ok'],
  ['§2.1#37', 'req_host_in ( "a.com" )', 'ok'],
  ['§2.1#37', 'req_host_in("a.com")\n&&\nreq_method_in("GET")', 'ok'],
  ['§2.1#38', '', /empty condition/],
  ['§2.1#38', ' \t\n ', /empty condition/],
  ['§2.1#39', 'Req_Host_In("a.com")', /primitive Req_Host_In not found \(names are case-sensitive: req_host_in\)/],
  ['§2.1#39', 'unknown_func()', /primitive unknown_func not found/],
  ['§2.1#40', 'req_cip_range(1.1.1.1, "2.2.2.2")', /column 15: unrecognized token/],
  ['§2.1#40', 'req_port_in(80)', /req_port_in argument 1 \(ports\) expects a string, got an integer/],
  ['§1.1 raw strings span lines', 'req_path_regmatch(`a\r\nb`)', 'ok'],
  ['§1.1 newline in "…"', 'req_host_in("a\nb")', /unterminated string/],
  ['§1.1 Go escapes', 'req_host_in("\\x41\\u00e9\\U0001F600\\101\\t\\.")', 'ok'],
  ['§1.1 bad \\x', 'req_host_in("\\x4")', /\\x expects 2 hex digits/],
  ['§1.1 - in identifiers', 'x-y', /unresolved variable 'x-y'/],
  [
    '§1.6 body/response',
    'req_body_json_in("model","gpt-4",false)',
    /req_body_json_in is not available when routing on the request head/,
  ],
  ['§1.6 body/response', 'res_code_in("200")', /res_code_in is not available/],
  ['§1.6 tag', 'req_tag_match("a","b")', /req_tag_match is not available/],
  [
    '§1.4 regex',
    'req_path_regmatch(`(`)',
    /column 19: req_path_regmatch: argument 1 \(regex\): bad regular expression `\(`: missing closing \)/,
  ],
  ['§1.4 regex (RE2 only)', 'req_path_regmatch(`(?=a)`)', /lookahead is not RE2 syntax/],
  ['§1.4 ports', 'req_port_in("80|x")', /bad port "x"/],
  ['§1.4 time', 'bfe_time_range("20190230000000H","20190305010000H")', /bad time "20190230000000H": no such date/],
  ['§1.4 time', 'bfe_time_range("2019020420000H","20190205010000H")', /expected yyyymmddhhmmss/],
  ['§1.4 time', 'bfe_time_range("20190205010000H","20190204200000H")', /is after end/],
  ['§1.3 named', '$nope', /column 1: unknown condition \$nope/],
  ['multi-line position', 'default_t() &&\n  req_path_in("/a")', /^line 2, column 3: req_path_in expects 2 arguments/],
];

describe('condition syntax and build (bfe.md §2.1)', () => {
  it.each(rows)('%s: %s', (_src, source, expected) => {
    const got = outcome(source);
    if (expected === 'ok') expect(got).toBe('ok');
    else expect(got).toMatch(expected);
  });

  it('§2.1#6: (a && b) && c parses', () => {
    expect(parse('(a && b) && c', WHERE).kind).toBe('and');
  });

  it('§2.1#25: !a && b is (!a) && b', () => {
    // With GET: (!false) && false = false, whereas !(false && false) would be true.
    const c = compileCondition('!req_method_in("POST") && req_method_in("POST")', { where: WHERE });
    expect(c(fakeRequest({ method: 'GET' }))).toBe(false);
    expect(c(fakeRequest({ method: 'POST' }))).toBe(false);
  });

  it('§2.1#28: "…" strings keep escapes as written', () => {
    const c = compileCondition('req_host_in("a\\"b.com")', { where: WHERE });
    expect(c(fakeRequest({ host: 'a\\"b.com' }))).toBe(true);
    expect(c(fakeRequest({ host: 'a"b.com' }))).toBe(false);
  });

  it('§2.1#13: "123" and `123` compile to the same matcher', () => {
    const a = compileCondition('req_url_regmatch("123")', { where: WHERE });
    const b = compileCondition('req_url_regmatch(`123`)', { where: WHERE });
    for (const target of ['/x?123', '/1234', '/12']) {
      expect(a(fakeRequest({ target }))).toBe(b(fakeRequest({ target })));
    }
    expect(a(fakeRequest({ target: '/a?id=123' }))).toBe(true);
  });

  it('the mixed-operator error shows both parenthesisations', () => {
    expect(outcome('req_method_in("GET") && default_t() || req_proto_secure()')).toBe(
      "column 37: '&&' and '||' mixed without parentheses; add them, e.g. " +
        '(req_method_in("GET") && default_t()) || req_proto_secure()  or  ' +
        'req_method_in("GET") && (default_t() || req_proto_secure())',
    );
  });
});
