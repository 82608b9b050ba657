import { describe, expect, it } from 'vitest';
import { compileRoutingTable } from '../../address-books/bfe/compile.ts';
import { explain, formatExplanation } from '../../address-books/bfe/explain.ts';
import { isSwitchboardError } from '../../src/base/errors.ts';
import type { Request } from '../../src/contracts/types.ts';
import { createRequest } from '../../src/request/request.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests mutate deep plain data freely
type Loose = Record<string, any>;

function req(
  host: string,
  path: string | undefined = '/',
  extra: { vip?: string; headers?: [string, string][] } = {},
): Request {
  return createRequest({
    protocol: path === undefined ? 'tls' : 'http1',
    host,
    path,
    headers: extra.headers ?? [],
    vip: extra.vip,
    clientIp: '192.0.2.1',
    clientPort: 40000,
    localIp: '127.0.0.1',
    localPort: 8080,
    listener: 'web',
  });
}

const one = (port: number) => ({ subclusters: { s1: { weight: 1, backends: [{ address: `127.0.0.1:${port}` }] } } });

const table = {
  defaultProduct: 'fallback',
  conditions: { canary: 'req_header_key_in("X-Canary")' },
  products: {
    web: {
      hosts: ['www.example.test', '*.example.test'],
      hostTags: { gold: ['gold.example.test'] },
      basicRules: [
        { hosts: ['www.example.test'], paths: ['/static/*'], cluster: 'static' },
        { hosts: ['*.example.test'], cluster: 'ADVANCED_MODE' },
      ],
      rules: [
        { cond: '$canary', cluster: 'canary' },
        { cond: 'req_host_tag_in("gold")', cluster: 'gold' },
        { cond: 'req_path_prefix_in("/api", false)', cluster: 'api' },
      ],
    },
    vipOnly: { vips: ['10.0.0.10', '2001:db8::10'], rules: [{ cond: 'default_t()', cluster: 'api' }] },
    fallback: { rules: [{ cond: 'default_t()', cluster: 'static' }] },
  },
  clusters: { static: one(9001), canary: one(9002), gold: one(9003), api: one(9004) },
};

describe('bfe routing lookup order (reference bfe.md §4)', () => {
  const snap = compileRoutingTable(table);
  // Each row: source, request, expected product / cluster / rule (undefined cluster = no route).
  const rows: readonly [string, Request, string | undefined, string | undefined][] = [
    ['§4.2a basic rule hit', req('www.example.test', '/static/a.css'), 'static', 'products.web.basicRules[0]'],
    ['§4.2a host chosen, path miss → advanced', req('www.example.test', '/api/x'), 'api', 'products.web.rules[2]'],
    ['§4.2a ADVANCED_MODE → advanced', req('a.example.test', '/api'), 'api', 'products.web.rules[2]'],
    [
      '§4.2b first match wins ($name)',
      req('a.example.test', '/api', { headers: [['X-Canary', '1']] }),
      'canary',
      'products.web.rules[0]',
    ],
    ['§1.6 req_host_tag_in uses the host table', req('gold.example.test', '/api'), 'gold', 'products.web.rules[1]'],
    ['§4.2b none match → no route', req('a.example.test', '/other'), undefined, undefined],
    ['§4.1 VIP when host unknown', req('unknown.test', '/', { vip: '10.0.0.10' }), 'api', 'products.vipOnly.rules[0]'],
    ['§4.1 VIP canonicalised', req('unknown.test', '/', { vip: '2001:DB8:0::10' }), 'api', 'products.vipOnly.rules[0]'],
    ['§4.1 host beats VIP', req('a.example.test', '/api', { vip: '10.0.0.10' }), 'api', 'products.web.rules[2]'],
    ['§4.1 default product last', req('unknown.test', '/'), 'static', 'products.fallback.rules[0]'],
  ];
  it.each(rows)('%s', (_src, r, cluster, rule) => {
    const c = snap.findAddresses(r);
    expect(c?.cluster).toBe(cluster);
    expect(c?.rule).toBe(rule);
  });

  it('returns the same frozen Candidates object for every hit of a rule', () => {
    const a = snap.findAddresses(req('www.example.test', '/static/a'));
    const b = snap.findAddresses(req('www.example.test', '/static/b'));
    expect(a).toBe(b);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a?.product).toBe('web');
  });

  it('no product without a default', () => {
    const s = compileRoutingTable({ ...table, defaultProduct: undefined });
    expect(s.findAddresses(req('unknown.test'))).toBeUndefined();
    expect(explain(s, req('unknown.test')).reason).toMatch(/no product/);
  });

  it('explains each step', () => {
    const e = explain(snap, req('www.example.test', '/api/x'));
    expect(e.product).toMatchObject({
      name: 'web',
      via: 'host',
      pattern: 'www.example.test',
      where: 'products.web.hosts[0]',
    });
    expect(e.basic).toMatchObject({ matched: false, hostPattern: 'www.example.test' });
    expect(e.advanced?.matched).toMatchObject({ index: 2, rule: 'products.web.rules[2]', cluster: 'api' });
    expect(e.candidates).toBe(snap.findAddresses(req('www.example.test', '/api/x')));
    expect(formatExplanation(e)).toMatch(/cluster: api/);
    const miss = explain(snap, req('a.example.test', '/other'));
    expect(miss.routed).toBe(false);
    expect(formatExplanation(miss)).toMatch(/no route: none of the 3 advanced rules/);
  });
});

describe('bfe clusters → candidates', () => {
  it('sorts sub-clusters, brackets IPv6 ids, defaults names and policy', () => {
    const s = compileRoutingTable({
      products: { p: { hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: {
        c: {
          retries: 1,
          subclusters: {
            z: { weight: 1, backends: [{ address: '[::1]:80', weight: 3 }] },
            a: { weight: 2, backends: [{ address: 'backend.internal:81', name: 'b1' }] },
            GSLB_BLACKHOLE: { weight: 1 },
          },
        },
      },
    });
    const c = s.findAddresses(req('a.test'))!;
    expect(c.subclusters.map((x) => x.name)).toEqual(['GSLB_BLACKHOLE', 'a', 'z']);
    expect(c.subclusters[2]!.backends[0]).toEqual({
      id: '[::1]:80',
      host: '::1',
      port: 80,
      weight: 3,
      name: '[::1]:80',
    });
    expect(c.subclusters[1]!.backends[0]).toMatchObject({ id: 'backend.internal:81', name: 'b1', weight: 1 });
    expect(c.policy).toMatchObject({ balance: 'wrr', retries: 1, crossRetries: 0, proxyProtocol: 'off' });
  });
});

describe('bfe cross-checks (reference bfe.md §3.8)', () => {
  const base = () => structuredClone(table) as Loose;
  const cases: readonly [string, (t: Loose) => void, RegExp][] = [
    [
      'missing cluster',
      (t) => {
        t.products.web.rules[2].cluster = 'nope';
      },
      /products\.web\.rules\[2\]\.cluster: cluster nope does not exist/,
    ],
    [
      'missing basic cluster',
      (t) => {
        t.products.web.basicRules[0].cluster = 'nope';
      },
      /products\.web\.basicRules\[0\]\.cluster: cluster nope/,
    ],
    [
      'missing default product',
      (t) => {
        t.defaultProduct = 'nope';
      },
      /defaultProduct: product nope does not exist/,
    ],
    [
      'host under two products',
      (t) => {
        t.products.fallback.hosts = ['WWW.example.test.'];
      },
      /products\.fallback\.hosts\[0\]: host www\.example\.test is already listed at addressBook\.products\.web\.hosts\[0\]/,
    ],
    [
      'vip under two products',
      (t) => {
        t.products.fallback.vips = ['10.0.0.10'];
      },
      /vip 10\.0\.0\.10 is already listed/,
    ],
    [
      'port in host',
      (t) => {
        t.products.web.hosts.push('x.test:80');
      },
      /hosts\[2\]: port must not be given/,
    ],
    [
      'zero sub-cluster weight',
      (t) => {
        t.clusters.api.subclusters.s1.weight = 0;
      },
      /clusters\.api\.subclusters: total sub-cluster weight must be > 0/,
    ],
    [
      'zero backend weight',
      (t) => {
        t.clusters.api.subclusters.s1.backends[0].weight = 0;
      },
      /clusters\.api\.subclusters\.s1: total backend weight must be > 0/,
    ],
    [
      'bad condition',
      (t) => {
        t.products.web.rules[1].cond = 'req_host_in(';
      },
      /products\.web\.rules\[1\]\.cond/,
    ],
    [
      'unknown key',
      (t) => {
        t.products.web.colour = 'blue';
      },
      /products\.web/,
    ],
    [
      'bad address',
      (t) => {
        t.clusters.api.subclusters.s1.backends[0].address = 'nope';
      },
      /clusters\.api\.subclusters\.s1\.backends\[0\]\.address: expected host:port/,
    ],
    [
      'duplicate basic path',
      (t) => {
        t.products.web.basicRules.push({ hosts: ['www.example.test'], paths: ['/static*'], cluster: 'api' });
      },
      /basicRules\[2\]\.paths\[0\]: host www\.example\.test path \/static\* is already routed by addressBook\.products\.web\.basicRules\[0\]/,
    ],
    [
      'retry budget',
      (t) => {
        t.clusters.api.retries = 10;
        t.clusters.api.crossRetries = 10;
      },
      /retries \+ crossRetries/,
    ],
  ];
  it.each(cases)('%s', (_name, mutate, message) => {
    const t = base();
    mutate(t);
    let error: unknown;
    try {
      compileRoutingTable(t, { pathPrefix: 'addressBook', source: 'load' });
    } catch (e) {
      error = e;
    }
    expect(isSwitchboardError(error) && error.code).toBe('SWB_ERR_CONFIG');
    expect((error as Error).message).toMatch(message);
  });

  it('allows a weight-0 sub-cluster without backends (bfe.md §3.5 spare)', () => {
    const t = base();
    t.clusters.api.subclusters.spare = { weight: 0 };
    expect(
      compileRoutingTable(t)
        .clusters.get('api')
        ?.subclusters.map((s) => s.name),
    ).toEqual(['s1', 'spare']);
    t.clusters.api.subclusters.spare = { weight: 1 };
    expect(() => compileRoutingTable(t)).toThrow(/clusters\.api\.subclusters\.spare: total backend weight must be > 0/);
  });

  it('reports every problem at once', () => {
    const t = base();
    t.defaultProduct = 'nope';
    t.products.web.rules[0].cluster = 'gone';
    expect(() => compileRoutingTable(t)).toThrow(
      /gone does not exist.*nope does not exist|nope does not exist.*gone does not exist/,
    );
  });
});
