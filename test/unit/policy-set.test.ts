/**
 * The policy rule set (issue 42 step 1, src/policy/): order and first match, `when:` compile
 * errors naming the rule, the point/primitive refusal, the point chosen by default, selectors,
 * holds given back when a later rule fires, and counters carried across a recompile only for
 * rules whose definition did not change.
 */
import { describe, expect, it } from 'vitest';
import {
  compilePolicies,
  PASS,
  PolicyPointError,
  PolicyRuleError,
  type PolicySet,
  policiesSchema,
} from '../../src/policy/index.ts';
import { atConnection, atRequest, atRouted, compileRules, fakeClock } from '../harness/policy.ts';
import { fakeRequest } from './condition-fixtures.ts';

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('policy set: order and first match', () => {
  it('the first rule that fires decides, in config order; later rules are not asked', () => {
    const set = compileRules([
      { name: 'api', use: 'respond', when: 'req_path_prefix_in("/api", false)', options: { status: 418 } },
      { name: 'all', use: 'respond', options: { status: 503, body: 'down' } },
    ]);
    const api = set.request(atRequest({ path: '/api/x' }));
    expect(api.rule).toBe('api');
    expect(api.policy).toBe('respond');
    expect(api.verdict).toMatchObject({ action: 'answer', answer: { status: 418 } });
    const other = set.request(atRequest({ path: '/shop' }));
    expect(other.rule).toBe('all');
    if (other.verdict.action !== 'answer') throw new Error('expected an answer');
    expect(text(other.verdict.answer.body)).toBe('down');
  });

  it('a point with no rule returns the one PASS object (no allocation, one length check)', () => {
    const set = compileRules([{ name: 'a', use: 'respond', options: { status: 503 } }]);
    expect(set.has('connection')).toBe(false);
    expect(set.connection(atConnection())).toBe(PASS);
    expect(set.handshake({ connection: fakeRequest() })).toBe(PASS);
    expect(set.routed(atRouted({}, 'p', 'c')).rule).toBeUndefined();
    const empty = compileRules([]);
    expect(empty.request(atRequest())).toBe(PASS);
  });

  it('a rule whose when is false lets through; the next rule is asked', () => {
    const set = compileRules([
      { name: 'internal', use: 'block', when: 'ses_listener_in("internal")' },
      { name: 'deny', use: 'block', options: { cidrs: ['192.0.2.0/24'] } },
    ]);
    expect(set.connection(atConnection({ listener: 'internal' })).rule).toBe('internal');
    expect(set.connection(atConnection({ listener: 'web', clientIp: '192.0.2.9' })).rule).toBe('deny');
    expect(set.connection(atConnection({ listener: 'web', clientIp: '198.51.100.1' }))).toBe(PASS);
  });
});

describe('policy set: points', () => {
  it('without point:, a rule runs at the earliest point that knows its when, selectors and options', () => {
    const set = compileRules([
      { name: 'list', use: 'block', options: { cidrs: ['10.0.0.0/8'] } },
      { name: 'sni', use: 'block', when: 'ses_tls_sni_in("bad.test")' },
      { name: 'path', use: 'block', when: 'req_path_prefix_in("/admin", false)' },
      { name: 'shop', use: 'respond', products: ['shop'], options: { status: 503 } },
      { name: 'by-host', use: 'rate-limit', options: { key: 'host', rate: '1/s' } },
      { name: 'by-cluster', use: 'in-flight', options: { key: 'cluster', max: 1 } },
    ]);
    expect(set.rules.map((r) => [r.name, r.point])).toEqual([
      ['list', 'connection'],
      ['sni', 'handshake'],
      ['path', 'request'],
      ['shop', 'routed'],
      ['by-host', 'request'],
      ['by-cluster', 'routed'],
    ]);
  });

  it('a when that needs more than its point knows is refused, naming the rule, point and primitive', () => {
    const compile = () =>
      compileRules([
        { name: 'ok', use: 'block', options: { cidrs: ['10.0.0.0/8'] } },
        {
          name: 'admin',
          use: 'block',
          point: 'connection',
          when: 'req_cip_trusted() && req_path_prefix_in("/a", false)',
        },
      ]);
    expect(compile).toThrow(PolicyPointError);
    try {
      compile();
    } catch (e) {
      const err = e as PolicyPointError;
      expect(err.code).toBe('SWB_ERR_CONFIG');
      expect(err.rule).toBe('admin');
      expect(err.point).toBe('connection');
      expect(err.primitive).toBe('req_path_prefix_in');
      expect(err.needs).toBe('request');
      expect(err.message).toBe(
        'policies[1] (admin): req_path_prefix_in needs the request point or later; the rule runs at connection',
      );
    }
  });

  it('SNI at connection, products: before routed, a header key at connection: refused the same way', () => {
    const refused = (rule: object) => {
      try {
        compileRules([rule]);
      } catch (e) {
        return e instanceof PolicyPointError ? [e.point, e.primitive, e.needs] : String(e);
      }
      return 'compiled';
    };
    expect(refused({ name: 'a', use: 'block', point: 'connection', when: 'ses_tls_sni_in("x")' })).toEqual([
      'connection',
      'ses_tls_sni_in',
      'handshake',
    ]);
    expect(refused({ name: 'b', use: 'block', point: 'request', products: ['shop'] })).toEqual([
      'request',
      'products:',
      'routed',
    ]);
    expect(
      refused({
        name: 'c',
        use: 'rate-limit',
        point: 'connection',
        options: { key: 'header', header: 'X-Key', rate: '1/s' },
      }),
    ).toEqual(['connection', 'the options of rate-limit', 'request']);
    expect(refused({ name: 'd', use: 'block', point: 'connection', action: { respond: 403 } })).toEqual([
      'connection',
      'action: respond',
      'request',
    ]);
  });

  it('a point the policy does not have is refused', () => {
    expect(() => compileRules([{ name: 'r', use: 'respond', point: 'connection', options: { status: 503 } }])).toThrow(
      'policies[0] (r): point: respond runs at request, routed, not connection',
    );
  });

  it('a connection-point when reads the connection facts (client address, listener, TLS)', () => {
    const set = compileRules([
      {
        name: 'outside',
        use: 'block',
        when: '!req_cip_cidr_in("10.0.0.0/8|127.0.0.1") && ses_listener_in("admin") && !req_proto_secure()',
      },
    ]);
    expect(set.rules[0]?.point).toBe('connection');
    expect(set.connection(atConnection({ clientIp: '192.0.2.1', listener: 'admin' })).verdict).toEqual({
      action: 'close',
    });
    expect(set.connection(atConnection({ clientIp: '10.1.2.3', listener: 'admin' }))).toBe(PASS);
    expect(set.connection(atConnection({ clientIp: '192.0.2.1', listener: 'admin', secure: true }))).toBe(PASS);
  });
});

describe('policy set: compile errors name the rule', () => {
  const message = (rules: unknown) => {
    try {
      compileRules(rules);
    } catch (e) {
      return (e as Error).message;
    }
    return 'compiled';
  };

  it('a bad when: the rule, the config path and the column', () => {
    expect(message([{ name: 'x', use: 'block', when: 'req_path_prefix_in("/a")' }])).toMatch(
      /^policies\[0\] \(x\): when: column 1: req_path_prefix_in expects 2 arguments/,
    );
    expect(
      message([
        { name: 'ok', use: 'block' },
        { name: 'y', use: 'block', when: 'req_host_in("a") &&' },
      ]),
    ).toMatch(/^policies\[1\] \(y\): when: column \d+: /);
  });

  it('an unknown policy, bad options (with their path), an action on a policy that answers', () => {
    expect(message([{ name: 'x', use: 'blok' }])).toBe('policies[0] (x): use: unknown policy "blok"');
    expect(message([{ name: 'x', use: 'rate-limit', options: { rate: 'fast' } }])).toContain(
      'policies[0].options.rate: expected a rate like 100/s',
    );
    expect(message([{ name: 'x', use: 'in-flight', options: { max: 2, colour: 1 } }])).toContain(
      'policies[0].options.colour: unknown key',
    );
    expect(message([{ name: 'x', use: 'respond', action: 'close', options: {} }])).toBe(
      'policies[0] (x): action: respond answers by its options; action is for refusing policies',
    );
  });

  it('the schema refuses duplicate names and unknown keys', () => {
    const r = policiesSchema.safeParse([
      { name: 'a', use: 'block' },
      { name: 'a', use: 'block', colour: 1 },
    ]);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(['1', '1.name']);
  });

  it('errors are typed (PolicyRuleError, code SWB_ERR_CONFIG)', () => {
    expect(() => compileRules([{ name: 'x', use: 'blok' }])).toThrow(PolicyRuleError);
  });
});

describe('policy set: selectors and actions', () => {
  it('products: and clusters: select at routed', () => {
    const set = compileRules([
      { name: 'shop', use: 'respond', products: ['shop'], clusters: ['blue', 'green'], options: { status: 503 } },
    ]);
    expect(set.routed(atRouted({}, 'shop', 'blue')).rule).toBe('shop');
    expect(set.routed(atRouted({}, 'shop', 'red'))).toBe(PASS);
    expect(set.routed(atRouted({}, 'blog', 'blue'))).toBe(PASS);
  });

  it("a rule's action: close at a request point, or an answer of its own", () => {
    const set = compileRules([
      { name: 'c', use: 'block', when: 'req_path_in("/c", false)', action: 'close' },
      {
        name: 'r',
        use: 'block',
        when: 'req_path_in("/r", false)',
        action: { respond: { status: 451, body: 'gone', headers: { 'X-Why': 'legal' } } },
      },
      { name: 'd', use: 'block', when: 'req_path_in("/d", false)' },
    ]);
    expect(set.request(atRequest({ path: '/c' })).verdict).toEqual({ action: 'close' });
    const r = set.request(atRequest({ path: '/r' })).verdict;
    expect(r).toMatchObject({ action: 'answer', answer: { status: 451 } });
    if (r.action === 'answer') {
      expect(r.answer.headers).toEqual([
        ['Content-Type', 'text/plain; charset=utf-8'],
        ['X-Why', 'legal'],
      ]);
      expect(text(r.answer.body)).toBe('gone');
    }
    expect(set.request(atRequest({ path: '/d' })).verdict).toMatchObject({ action: 'answer', answer: { status: 403 } });
  });

  it('holds taken by rules that let through are given back when a later rule fires', () => {
    const set = compileRules([
      { name: 'slots', use: 'in-flight', point: 'request', options: { key: 'rule', max: 1 } },
      { name: 'admin', use: 'block', when: 'req_path_prefix_in("/admin", false)' },
    ]);
    expect(set.request(atRequest({ path: '/admin' })).rule).toBe('admin');
    const held = set.request(atRequest({ path: '/' }));
    expect(held.rule).toBeUndefined();
    expect(held.verdict.action).toBe('pass');
    expect(set.request(atRequest({ path: '/' })).rule).toBe('slots');
    held.release();
    held.release();
    const again = set.request(atRequest({ path: '/' }));
    expect(again.rule).toBeUndefined();
    expect(set.request(atRequest({ path: '/' })).rule).toBe('slots');
  });
});

describe('policy set: counters across a recompile', () => {
  const rules = (burstB: number) => [
    { name: 'a', use: 'rate-limit', when: 'req_path_in("/a", false)', options: { key: 'rule', rate: '1/s', burst: 2 } },
    {
      name: 'b',
      use: 'rate-limit',
      when: 'req_path_in("/b", false)',
      options: { key: 'rule', rate: '1/s', burst: burstB },
    },
  ];
  const fired = (set: PolicySet, path: string) => set.request(atRequest({ path })).rule;

  it('an unchanged rule keeps its state (no fresh burst); a changed one starts afresh', () => {
    const clock = fakeClock();
    const first = compileRules(rules(2), { now: clock.now });
    for (const path of ['/a', '/b']) {
      expect([fired(first, path), fired(first, path), fired(first, path)]).toEqual([
        undefined,
        undefined,
        path.slice(1),
      ]);
    }
    const second = compileRules(rules(3), { now: clock.now, previous: first });
    const same = second.rules.map((r) => r.identity === first.rules.find((f) => f.name === r.name)?.identity);
    expect(same).toEqual([true, false]);
    expect(fired(second, '/a')).toBe('a');
    expect(fired(second, '/b')).toBeUndefined();
    // Without the previous set, the same rules start afresh: it is the carry that kept a's state.
    const fresh = compileRules(rules(2), { now: clock.now });
    expect(fired(fresh, '/a')).toBeUndefined();
  });

  it('the same rule with other key order is the same identity; another name is not', () => {
    const one = compileRules([{ name: 'r', use: 'in-flight', options: { max: 2, key: 'rule' } }]);
    const two = compileRules([{ options: { key: 'rule', max: 2 }, use: 'in-flight', name: 'r' }]);
    const other = compileRules([{ name: 's', use: 'in-flight', options: { max: 2, key: 'rule' } }]);
    expect(one.rules[0]?.identity).toBe(two.rules[0]?.identity);
    expect(one.rules[0]?.identity).not.toBe(other.rules[0]?.identity);
    expect(one.rules[0]?.identity).toMatch(/^r#[0-9a-f]{16}$/);
  });

  it('a rule that did not change keeps its in-flight count: a slot taken before the reload is still counted', () => {
    const first = compileRules([{ name: 'r', use: 'in-flight', point: 'request', options: { key: 'rule', max: 1 } }]);
    const held = first.request(atRequest());
    const second = compileRules([{ name: 'r', use: 'in-flight', point: 'request', options: { key: 'rule', max: 1 } }], {
      previous: first,
    });
    expect(second.request(atRequest()).rule).toBe('r');
    held.release();
    expect(second.request(atRequest()).rule).toBeUndefined();
  });

  it('a finish that throws is logged and the other observers are still told', async () => {
    const seen: string[] = [];
    const observer = (name: string, fail: boolean) => ({
      name,
      points: ['request'] as const,
      create: () => ({
        request: () => undefined,
        finish: (ctx: { ended: string }) => {
          seen.push(`${name} ${ctx.ended}`);
          if (fail) throw new TypeError('observer bug');
        },
      }),
    });
    const factories: Record<string, unknown> = { bad: observer('bad', true), good: observer('good', false) };
    const set = compilePolicies(
      policiesSchema.parse([
        { name: 'b', use: 'bad', point: 'request' },
        { name: 'g', use: 'good', point: 'request' },
      ]),
      { resolve: (use) => factories[use] as never, configDir: process.cwd() },
    );
    const logged: unknown[] = [];
    await set.start({ error: (o: unknown) => logged.push(o) } as never);
    expect(set.observes).toBe(true);
    set.finish({ ...atRequest(), ended: 'request' });
    expect(seen).toEqual(['bad request', 'good request']);
    expect(logged).toMatchObject([{ policy: 'b', use: 'bad' }]);
  });
});
