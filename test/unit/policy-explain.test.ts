/**
 * `PolicySet.explain` (src/policy/explain.ts) and the key tables by rule (key-tables.ts):
 * which rules would act on a request, without side effects.
 */
import { describe, expect, it } from 'vitest';
import { ruleKeySizes } from '../../src/policy/key-tables.ts';
import { atConnection, atRequest, atRouted, compileRules, fakeClock } from '../harness/policy.ts';

const decoded = (v: { answer: { body: Uint8Array } }) => new TextDecoder().decode(v.answer.body);

describe('PolicySet.explain', () => {
  it('no rule at the point: nothing', () => {
    const set = compileRules([{ name: 'deny', use: 'block', options: { cidrs: ['192.0.2.0/24'] } }]);
    expect(set.explain('request', atRequest())).toEqual([]);
  });

  it('block: fires for a listed address (close at connection), passes for another', () => {
    const set = compileRules([{ name: 'deny', use: 'block', options: { cidrs: ['192.0.2.0/24'] } }]);
    expect(set.explain('connection', atConnection({ clientIp: '192.0.2.9' }))).toEqual([
      { rule: 'deny', policy: 'block', point: 'connection', outcome: 'fires', verdict: { action: 'close' } },
    ]);
    expect(set.explain('connection', atConnection({ clientIp: '198.51.100.1' }))).toEqual([
      { rule: 'deny', policy: 'block', point: 'connection', outcome: 'passes' },
    ]);
  });

  it('when: and selectors leave out the rules they do not select', () => {
    const set = compileRules([
      { name: 'admin', use: 'block', when: 'req_path_prefix_in("/admin", false)', action: { respond: 403 } },
      { name: 'maint', use: 'respond', products: ['shop'], options: { status: 503, body: 'later\n' } },
    ]);
    expect(set.explain('request', atRequest({ path: '/' }))).toEqual([]);
    const [admin] = set.explain('request', atRequest({ path: '/admin/x' }));
    expect(admin).toMatchObject({ rule: 'admin', outcome: 'fires', verdict: { action: 'answer' } });
    expect(set.explain('routed', atRouted({}, 'blog', 'web'))).toEqual([]);
    const [maint] = set.explain('routed', atRouted({}, 'shop', 'web'));
    expect(maint?.outcome).toBe('fires');
    if (maint?.outcome !== 'fires' || maint.verdict.action !== 'answer') throw new Error('expected an answer');
    expect(maint.verdict.answer.status).toBe(503);
    expect(decoded(maint.verdict)).toBe('later\n');
  });

  it('redirect: the Location it would answer; passes when the request already has that URL', () => {
    const set = compileRules([{ name: 'https', use: 'redirect', options: { scheme: 'https', status: 308 } }]);
    const [r] = set.explain('request', atRequest({ host: 'shop.test', target: '/a?b=1', path: '/a', query: 'b=1' }));
    if (r?.outcome !== 'fires' || r.verdict.action !== 'answer') throw new Error('expected an answer');
    expect(r.verdict.answer.status).toBe(308);
    expect(r.verdict.answer.headers).toContainEqual(['Location', 'https://shop.test/a?b=1']);
    expect(set.explain('request', atRequest({ host: 'shop.test', secure: true }))).toEqual([
      { rule: 'https', policy: 'redirect', point: 'request', outcome: 'passes' },
    ]);
  });

  it('rate-limit and in-flight apply without taking a token or a slot', () => {
    const clock = fakeClock();
    const set = compileRules(
      [
        { name: 'one', use: 'rate-limit', point: 'request', options: { key: 'client-ip', rate: '1/s', burst: 1 } },
        { name: 'cap', use: 'in-flight', point: 'request', options: { key: 'client-ip', max: 1 } },
      ],
      { now: clock.now },
    );
    for (let i = 0; i < 5; i++) {
      expect(set.explain('request', atRequest())).toEqual([
        { rule: 'one', policy: 'rate-limit', point: 'request', outcome: 'applies' },
        { rule: 'cap', policy: 'in-flight', point: 'request', outcome: 'applies' },
      ]);
    }
    // The one token and the one slot are still there: the first real request passes holding the slot.
    const outcome = set.request(atRequest());
    expect(outcome.verdict.action).toBe('pass');
    expect(ruleKeySizes(set.counters, set.rules)).toEqual(
      new Map([
        ['one', 1],
        ['cap', 1],
      ]),
    );
    // And the second is refused by the rate limit: explaining took nothing, the request did.
    expect(set.request(atRequest()).rule).toBe('one');
    outcome.release();
  });

  it('the first rule that fires ends the list; counting rules before it are listed', () => {
    const set = compileRules([
      { name: 'rate', use: 'rate-limit', point: 'request', options: { key: 'client-ip', rate: '10/s' } },
      { name: 'deny', use: 'block', point: 'request', options: { cidrs: ['192.0.2.0/24'] } },
      { name: 'later', use: 'respond', options: { status: 503 } },
    ]);
    expect(set.explain('request', atRequest({ clientIp: '192.0.2.1' })).map((e) => [e.rule, e.outcome])).toEqual([
      ['rate', 'applies'],
      ['deny', 'fires'],
    ]);
  });
});

describe('ruleKeySizes', () => {
  it('the keys each counting rule holds; rules without counters are absent', () => {
    const clock = fakeClock();
    const set = compileRules(
      [
        { name: 'rate', use: 'rate-limit', point: 'request', options: { key: 'client-ip', rate: '10/s' } },
        { name: 'deny', use: 'block', options: { cidrs: ['192.0.2.0/24'] } },
      ],
      { now: clock.now },
    );
    expect(ruleKeySizes(set.counters, set.rules)).toEqual(new Map([['rate', 0]]));
    for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.1'])
      set.request(atRequest({ clientIp: ip }));
    expect(ruleKeySizes(set.counters, set.rules)).toEqual(new Map([['rate', 3]]));
  });
});
