/**
 * The `*_regmatch` primitives run on RE2 (issue 17 item 1): Go `regexp` syntax and semantics
 * (flags, classes, anchors, Unicode), patterns RE2 cannot compile refused at build time with the
 * argument and the reason, and hostile values that make a backtracking engine run for seconds
 * matched in linear time. Rows cite the Go/RE2 syntax reference (github.com/google/re2/wiki/Syntax).
 */
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { compileCondition } from '../../src/condition/index.ts';
import { type FakeRequestInit, fakeRequest } from './condition-fixtures.ts';

const where = 'rules[0].cond';

/** Compiles and evaluates one condition. */
function evaluate(source: string, init: FakeRequestInit): boolean {
  return compileCondition(source, { where })(fakeRequest(init));
}

const path = (regex: string, p: string): readonly [string, FakeRequestInit] => [
  `req_path_regmatch(\`${regex}\`)`,
  { path: p },
];

// [syntax reference, [condition, request], expected]
const matchRows: ReadonlyArray<readonly [string, readonly [string, FakeRequestInit], boolean]> = [
  ['flags: (?i) at the start', path('(?i)^/API/', '/api/x'), true],
  ['flags: (?i:…) is scoped', path('^/(?i:api)/X', '/API/x'), false],
  ['flags: (?i:…) is scoped', path('^/(?i:api)/X', '/API/X'), true],
  ['flags: (?i) in the middle', path('^/a(?i)BC$', '/abc'), true],
  ['flags: (?-i) turns it off', path('(?i)^/a(?-i)BC$', '/Abc'), false],
  ['flags: . does not match \\n by default', path('^/a.b$', '/a\nb'), false],
  ['flags: (?s) . matches \\n', path('(?s)^/a.b$', '/a\nb'), true],
  ['flags: $ is the end of text, not before a final \\n', path('^/a$', '/a\n'), false],
  ['flags: (?m) ^ and $ at line ends', path('(?m)^b$', '/a\nb\nc'), true],
  ['flags: (?U) is accepted (ungreedy)', path('(?U)^/a+$', '/aaa'), true],
  ['unanchored: matches anywhere', path('b/c', '/a/b/c/d'), true],
  ['anchors: \\A and \\z', path('\\A/a/b\\z', '/a/b'), true],
  ['anchors: \\z is the very end', path('/a\\z', '/a/'), false],
  ['anchors: \\b word boundary', path('\\bapi\\b', '/v1/api/x'), true],
  ['anchors: \\B', path('\\Bpi\\b', '/api'), true],
  ['classes: \\d is ASCII only', path('^/\\d+$', '/\u0663'), false],
  ['classes: \\pN is any number', path('^/\\pN+$', '/\u0663'), true],
  ['classes: [[:alpha:]] (POSIX)', path('^/[[:alpha:]]+$', '/abc'), true],
  ['classes: [[:^digit:]] negated POSIX', path('^/[[:^digit:]]+$', '/a1'), false],
  ['classes: \\w is ASCII only', path('^/\\w+$', '/é'), false],
  ['classes: \\s', path('a\\sb', '/a b'), true],
  ['classes: \\Q…\\E quotes', path('^/\\Q.*+\\E$', '/.*+'), true],
  ['classes: \\Q…\\E quotes', path('^/\\Q.*+\\E$', '/abc'), false],
  ['groups: (?P<name>…) named group', path('^/(?P<v>v\\d)/', '/v2/x'), true],
  ['groups: (?<name>…) named group', path('^/(?<v>v\\d)/', '/v2/x'), true],
  ['repeats: {n,m}', path('^/a{2,3}$', '/aaaa'), false],
  ['repeats: {n,m}', path('^/a{2,3}$', '/aaa'), true],
  ['unicode: literal', path('^/café$', '/café'), true],
  ['unicode: \\p{Han}', path('^/\\p{Han}+$', '/中文'), true],
  ['unicode: \\p{Greek}', path('\\p{Greek}', '/abc'), false],
  ['unicode: . is one code point, astral included', path('^/.$', '/😀'), true],
  ['unicode: \\x{…} escapes', path('^/\\x{1F600}$', '/😀'), true],
  ['unicode: (?i) folds simple cases (K and the Kelvin sign)', path('(?i)^/k$', '/\u212a'), true],
  ['unicode: (?i) does not fold ß to SS', path('(?i)^/straße$', '/STRASSE'), false],
  ['host: lower-cased host', ['req_host_regmatch(`^api\\.example\\.(com|net)$`)', { host: 'api.example.net' }], true],
  ['url: raw target with query', ['req_url_regmatch(`[?&]debug=1(&|$)`)', { target: '/a?x=1&debug=1' }], true],
  ['query value', ['req_query_value_regmatch("id", `^[0-9a-f]{8}$`)', { query: 'id=deadbeef' }], true],
  ['header value', ['req_header_value_regmatch("X-Ver", `^v(1|2)\\.`)', { headers: { 'X-Ver': 'v2.3' } }], true],
  ['ua', ['req_ua_regmatch(`(?i)googlebot|bingbot`)', { headers: { 'User-Agent': 'Mozilla (BingBot/2.0)' } }], true],
  ['ua absent fetches "" (bfe.md §1.5)', ['req_ua_regmatch(`.`)', {}], false],
  ['ua absent fetches "" (bfe.md §1.5)', ['req_ua_regmatch(`^$`)', {}], true],
];

// [what, pattern, the reason the error must give]
const rejectRows: ReadonlyArray<readonly [string, string, RegExp]> = [
  ['lookahead', '^/a(?=b)', /invalid or unsupported Perl syntax: `\(\?=` \(lookahead is not RE2 syntax/],
  ['negative lookahead', '^/(?!admin)', /lookahead is not RE2 syntax/],
  ['lookbehind', '(?<=/)admin', /lookbehind is not RE2 syntax/],
  ['negative lookbehind', '(?<!x)admin', /lookbehind is not RE2 syntax/],
  ['backreference', '(a)\\1', /invalid escape sequence: `\\1` \(backreferences are not RE2 syntax/],
  ['named backreference', '(?<x>a)\\k<x>', /backreferences are not RE2 syntax/],
  ['possessive ++', 'a++', /invalid nested repetition operator: `\+\+` \(possessive quantifiers/],
  ['possessive *+', '/a*+b', /possessive quantifiers are not RE2 syntax/],
  ['atomic group', '(?>a+)b', /atomic groups are not RE2 syntax/],
  ['\\Z', 'a\\Z', /invalid escape sequence: `\\Z` \(use \\z/],
  ['\\u escape', '\\u0041', /invalid escape sequence: `\\u` \(write \\x\{hhhh\}/],
  ['(?x) flag', '(?x)a b', /invalid or unsupported Perl syntax: `\(\?x`/],
  ['comment group', '(?#note)a', /invalid or unsupported Perl syntax/],
  ['repeat over 1000', 'a{1001}', /invalid repeat count: `\{1001\}`/],
  ['nested repeats over 1000', '(a{100}){100}', /invalid repeat count/],
  ['reversed range', '[z-a]', /invalid character class range: `z-a`/],
  ['unclosed group', '(a', /missing closing \): `\(a`/],
  ['unknown class', '[[:word2:]]', /invalid character class range/],
  ['unknown Unicode class', '\\p{Klingon}', /invalid character class range/],
];

/** Compiles `source`, returning the error message (or 'ok'). */
function outcome(source: string): string {
  try {
    compileCondition(source, { where });
    return 'ok';
  } catch (e) {
    if (!isSwitchboardError(e) || e.code !== 'SWB_ERR_CONDITION') throw e;
    return e.message;
  }
}

describe('regmatch primitives: RE2 syntax and semantics', () => {
  it.each(matchRows)('%s: %j → %s', (_ref, [source, init], expected) => {
    expect(evaluate(source, init)).toBe(expected);
  });
});

describe('regmatch primitives: patterns RE2 cannot run are refused at build', () => {
  it.each(rejectRows)('%s: %s', (_what, regex, reason) => {
    const message = outcome(`req_ua_regmatch(\`${regex}\`)`);
    // Points at the argument (column 17), names it and the pattern, then gives the reason.
    expect(message).toContain(`${where}: column 17: req_ua_regmatch: argument 1 (regex): bad regular expression`);
    expect(message).toContain(`\`${regex}\``);
    expect(message).toMatch(reason);
  });

  it('a pattern compiling to more than 100 instructions is refused (issue 39 item 2)', () => {
    // Counted repetitions expand to one instruction per copy: \pL{1,1000}\d is 2002.
    expect(outcome('req_ua_regmatch(`\\pL{1,1000}\\d`)')).toBe(
      `${where}: column 17: req_ua_regmatch: argument 1 (regex): regular expression \`\\pL{1,1000}\\d\` compiles to 2002 instructions, more than 100: matching time grows with the program (a counted repetition such as \`{1,1000}\` is one instruction per copy); use a smaller count, or \`*\`/\`+\``,
    );
    expect(outcome('req_path_regmatch(`[ab]*a[ab]{94}\\d`)')).toBe('ok');
    expect(outcome('req_path_regmatch(`[ab]*a[ab]{95}\\d`)')).toMatch(/compiles to 101 instructions, more than 100/);
    expect(outcome('req_header_value_regmatch("X-A", `a{200}`)')).toMatch(
      /argument 2 \(regex\): regular expression `a\{200\}` compiles to/,
    );
  });

  it('names the second argument of a two-argument primitive', () => {
    expect(outcome('req_header_value_regmatch("X-A", `(?=a)`)')).toMatch(
      /column 34: req_header_value_regmatch: argument 2 \(regex\): bad regular expression `\(\?=a\)`/,
    );
    expect(outcome('req_query_value_regmatch("k", `a++`)')).toMatch(/argument 2 \(regex\)/);
  });

  it('every regmatch primitive goes through RE2', () => {
    for (const call of [
      'req_host_regmatch(`(?=a)`)',
      'req_path_regmatch(`(?=a)`)',
      'req_url_regmatch(`(?=a)`)',
      'req_query_value_regmatch("k", `(?=a)`)',
      'req_header_value_regmatch("h", `(?=a)`)',
      'req_ua_regmatch(`(?=a)`)',
    ]) {
      expect(outcome(call), call).toMatch(/lookahead is not RE2 syntax/);
    }
  });
});

describe('regmatch primitives: hostile values match in linear time', () => {
  // Each of these takes seconds to hours on a backtracking engine (V8's RegExp): the first
  // doubles per byte from ~30 bytes on, the others are quadratic or worse in the value's length.
  // Behaviour only: the test asserts the answers; with a backtracking engine it never finishes.
  it('nested quantifier on a 100 KB path', () => {
    const c = compileCondition('req_path_regmatch(`^/assets/([a-z0-9]+/?)*\\.css$`)', { where });
    expect(c(fakeRequest({ path: `/assets/${'a'.repeat(100_000)}!` }))).toBe(false);
    expect(c(fakeRequest({ path: `/assets/${'a'.repeat(40)}!` }))).toBe(false);
    expect(c(fakeRequest({ path: '/assets/ab/cd/site.css' }))).toBe(true);
  });

  it('.* chains on a 100 KB User-Agent', () => {
    const c = compileCondition('req_ua_regmatch(`(?i).*bot.*crawl`)', { where });
    expect(c(fakeRequest({ headers: { 'User-Agent': 'bot'.repeat(34_000) } }))).toBe(false);
    expect(c(fakeRequest({ headers: { 'User-Agent': `Mozilla ${'x'.repeat(100_000)}` } }))).toBe(false);
    expect(c(fakeRequest({ headers: { 'User-Agent': 'SomeBot/1.0 (+crawler)' } }))).toBe(true);
  });

  it('alternation under a star on a 100 KB header value', () => {
    const c = compileCondition('req_header_value_regmatch("X-A", `^(a|a)*$`)', { where });
    expect(c(fakeRequest({ headers: { 'X-A': `${'a'.repeat(100_000)}b` } }))).toBe(false);
    expect(c(fakeRequest({ headers: { 'X-A': `${'a'.repeat(1_000)}b` } }))).toBe(false);
    expect(c(fakeRequest({ headers: { 'X-A': 'a'.repeat(1_024) } }))).toBe(true);
  });

  it('a value over 1024 characters is not matched (issue 39 item 2)', () => {
    const c = compileCondition('req_ua_regmatch(`bot`)', { where });
    expect(c(fakeRequest({ headers: { 'User-Agent': `${'x'.repeat(1021)}bot` } }))).toBe(true);
    expect(c(fakeRequest({ headers: { 'User-Agent': `${'x'.repeat(1022)}bot` } }))).toBe(false);
    const not = compileCondition('!req_ua_regmatch(`bot`)', { where });
    expect(not(fakeRequest({ headers: { 'User-Agent': `bot${'x'.repeat(1022)}` } }))).toBe(true);
  });

  it('a compiled condition is reused: many evaluations of the same matcher agree', () => {
    const c = compileCondition('req_host_regmatch(`^(www\\.)?example\\.(com|net)$`)', { where });
    const hosts = ['example.com', 'www.example.net', 'wwwexample.com', 'example.org'];
    for (let i = 0; i < 1000; i++) {
      expect(hosts.map((host) => c(fakeRequest({ host })))).toEqual([true, true, false, false]);
    }
  });
});
