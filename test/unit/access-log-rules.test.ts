/**
 * `log.access.rules` (issue 44 item 3) compiled and judged line by line, table-driven: the keys
 * (statuses with classes and 0, results, minDuration, products, clusters, when over the line),
 * first match decides, unmatched lines written, sample draws, counts by rule; and the refusals
 * at config load, each naming the rule's path.
 */
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../app/load-config.ts';
import { AccessLogCounts, compileAccessRules } from '../../src/access-log/index.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import { seededRandom } from '../../src/base/random.ts';
import { configSchema } from '../../src/config/schema.ts';

const BOOK = {
  name: 'bfe',
  products: { p: { hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
  clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: '127.0.0.1:9' }] } } } },
};

function rulesOf(rules: unknown[]) {
  const c = configSchema.parse({
    listeners: [{ name: 'web', address: '127.0.0.1:0' }],
    addressBook: BOOK,
    log: { access: { file: 'off', rules } },
  });
  return c.log.accessRules;
}

function line(over: Partial<AccessRecord>): AccessRecord {
  return { listener: 'web', client: '10.1.2.3:4000', bytesIn: 0, bytesOut: 0, durationMs: 1, result: 'ok', ...over };
}

function judge(rules: unknown[], records: AccessRecord[], random = seededRandom(1)) {
  const counts = new AccessLogCounts();
  const compiled = compileAccessRules(rulesOf(rules), { where: 'log.access.rules', random, counts });
  return { kept: records.map((r) => compiled.keep(r)), counts: Object.fromEntries(counts.entries()) };
}

describe('log.access.rules: which lines are written', () => {
  const cases: [string, unknown[], Partial<AccessRecord>, boolean][] = [
    ['no rule: written', [], {}, true],
    ['status class 5xx', [{ statuses: ['5xx'], log: false }], { status: 503 }, false],
    ['status class does not match 404', [{ statuses: ['5xx'], log: false }], { status: 404 }, true],
    ['exact status 499', [{ statuses: [499], log: false }], { status: 499 }, false],
    ['0 is a line without a status', [{ statuses: [0], log: false }], {}, false],
    ['0 does not match a 200', [{ statuses: [0], log: false }], { status: 200 }, true],
    ['results', [{ results: ['no_route'], log: false }], { result: 'no_route', status: 404 }, false],
    ['minDuration: at least', [{ minDuration: '500ms', log: false }], { durationMs: 500 }, false],
    ['minDuration: shorter', [{ minDuration: '500ms', log: false }], { durationMs: 499.9 }, true],
    ['products', [{ products: ['p'], log: false }], { product: 'p' }, false],
    ['products: a line without one', [{ products: ['p'], log: false }], {}, true],
    ['clusters', [{ clusters: ['c'], log: false }], { cluster: 'c' }, false],
    ['when on host', [{ when: 'req_host_in("health.internal")', log: false }], { host: 'health.internal' }, false],
    ['when on another host', [{ when: 'req_host_in("health.internal")', log: false }], { host: 'a.test' }, true],
    [
      'when on path and method',
      [{ when: 'req_path_prefix_in("/hc", false) && req_method_in("GET")', log: false }],
      { path: '/hc/x', method: 'GET' },
      false,
    ],
    ['when on the client address', [{ when: 'req_cip_cidr_in("10.0.0.0/8")', log: false }], {}, false],
    ['when on an IPv6 client', [{ when: 'req_cip_cidr_in("::1/128")', log: false }], { client: '::1:5000' }, false],
    ['when on the listener', [{ when: 'ses_listener_in("web")', log: false }], {}, false],
    [
      'every key must match',
      [{ statuses: ['5xx'], minDuration: '1s', log: false }],
      { status: 500, durationMs: 5 },
      true,
    ],
    ['first match decides', [{ statuses: ['5xx'] }, { log: false }], { status: 502 }, true],
    ['catch-all drops the rest', [{ statuses: ['5xx'] }, { log: false }], { status: 200 }, false],
  ];
  it.each(cases)('%s', (_, rules, over, written) => {
    expect(judge(rules, [line(over)]).kept).toEqual([written]);
  });

  it('counts each line under the rule that decided it (name, rules[i], none)', () => {
    const { counts } = judge(
      [
        { name: 'errors', statuses: ['5xx'] },
        { when: 'req_host_in("hc.test")', log: false },
      ],
      [line({ status: 500 }), line({ host: 'hc.test' }), line({ host: 'hc.test' }), line({ status: 200 })],
    );
    expect(counts).toEqual({
      errors: { written: 1, skipped: 0 },
      'rules[1]': { written: 0, skipped: 2 },
      none: { written: 1, skipped: 0 },
    });
  });

  it('sample: 0.1 of 10,000 lines with a seeded generator writes the same lines every run, about 1,000', () => {
    const records = Array.from({ length: 10_000 }, () => line({}));
    const a = judge([{ sample: 0.1 }], records, seededRandom(42));
    const b = judge([{ sample: 0.1 }], records, seededRandom(42));
    expect(a.kept).toEqual(b.kept);
    const n = a.kept.filter(Boolean).length;
    // Binomial(10,000, 0.1): sd 30; ±150 is 5 sd (and the seed makes it exact).
    expect(n).toBeGreaterThan(850);
    expect(n).toBeLessThan(1150);
    expect(judge([{ sample: 0 }], records.slice(0, 100)).kept.some(Boolean)).toBe(false);
    expect(judge([{ sample: 1 }], records.slice(0, 100)).kept.every(Boolean)).toBe(true);
  });
});

describe('log.access.rules refused at config load, naming the rule', () => {
  async function errorsOf(rules: unknown[]): Promise<string> {
    const raw = {
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      addressBook: BOOK,
      log: { access: { file: 'stdout', rules } },
    };
    try {
      await validateConfig(raw, '/tmp/sb.yaml', '');
    } catch (e) {
      return (e as Error).message;
    }
    return '';
  }

  it.each([
    [
      [{ log: false }, { when: 'req_header_value_in("User-Agent", "kube-probe", false)' }],
      'log.access.rules[1].when: req_header_value_in cannot be evaluated on an access line',
    ],
    [[{ when: 'ses_tls_sni_in("a.test")' }], 'log.access.rules[0].when: ses_tls_sni_in cannot be evaluated'],
    [[{ when: 'req_host_in(' }], 'log.access.rules[0].when: column'],
    [[{ statuses: ['6xx'] }], 'log.access.rules[0].statuses[0]'],
    [[{ statuses: [700] }], 'log.access.rules[0].statuses[0]'],
    [[{ results: ['no_rout'] }], 'log.access.rules[0].results[0]'],
    [[{ sample: 1.5 }], 'log.access.rules[0].sample'],
    [[{ sample: 0.5, log: false }], 'log.access.rules[0].sample'],
    [[{ minDuration: 'soon' }], 'log.access.rules[0].minDuration'],
    [[{ statuses: ['5xx'], lg: false }], 'log.access.rules[0]'],
    [[{ name: 'a' }, { name: 'a' }], 'log.access.rules[1].name'],
  ])('%j', async (rules, message) => {
    expect(await errorsOf(rules)).toContain(message);
  });

  it('a plain target is still a string, with no rules', () => {
    const c = configSchema.parse({ listeners: [{ name: 'web', address: '127.0.0.1:0' }], log: { access: 'off' } });
    expect(c.log).toMatchObject({ access: 'off', accessRules: [] });
    const d = configSchema.parse({ listeners: [{ name: 'web', address: '127.0.0.1:0' }] });
    expect(d.log).toMatchObject({ access: 'stdout', accessRules: [] });
    const e = configSchema.parse({
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      log: { access: { rules: [{ log: false }] } },
    });
    expect(e.log).toMatchObject({ access: 'stdout', accessRules: [{ log: false }] });
  });
});
