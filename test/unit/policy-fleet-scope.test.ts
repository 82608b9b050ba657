/**
 * `scope:` and `failMode:` on rate-limit and in-flight (issue 43 item 3): a `scope: fleet` rule
 * without the fleet's counters is refused naming the rule; `failMode` without `scope: fleet` is
 * refused; with them the rule counts in the fleet store (the set's counters list both stores);
 * config load refuses `scope: fleet` without `fleet.redis`, and on the worker panel.
 */
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../app/load-config.ts';
import { LocalCounters, PolicyRuleError, ScopedCounters } from '../../src/policy/index.ts';
import { compileRules } from '../harness/policy.ts';

const rule = (options: Record<string, unknown>, use = 'rate-limit') => [
  { name: 'shared', use, point: 'request', options: { key: 'rule', ...options } },
];

describe('scope: fleet', () => {
  it('is refused naming the rule without the fleet counters', () => {
    for (const use of ['rate-limit', 'in-flight']) {
      const options = use === 'rate-limit' ? { rate: '10/s', scope: 'fleet' } : { max: 2, scope: 'fleet' };
      expect(() => compileRules(rule(options, use))).toThrow(PolicyRuleError);
      expect(() => compileRules(rule(options, use))).toThrow(
        /policies\[0\] \(shared\): .*scope: fleet needs fleet\.redis/,
      );
    }
  });

  it('failMode is for scope: fleet only', () => {
    expect(() => compileRules(rule({ rate: '10/s', failMode: 'closed' }))).toThrow(/failMode is for scope: fleet/);
  });

  it('counts in the fleet store when there is one; local rules stay local', () => {
    const fleet = new LocalCounters();
    const set = compileRules(
      [
        ...rule({ rate: '10/s', scope: 'fleet', failMode: 'closed' }),
        { name: 'mine', use: 'in-flight', point: 'request', options: { key: 'rule', max: 1 } },
      ],
      { fleetCounters: fleet },
    );
    expect(set.counters).toBeInstanceOf(ScopedCounters);
    expect([...fleet.entries()].map(([k]) => k.split(' ')[0])).toEqual(['rate']);
    expect([...(set.counters as ScopedCounters).local.entries()].map(([k]) => k.split(' ')[0])).toEqual([
      'concurrency',
    ]);
  });
});

describe('config load', () => {
  const config = (panel: string, redis: boolean) => ({
    listeners: [{ name: 'web', address: '127.0.0.1:0' }],
    panel: { name: panel },
    addressBook: { name: 'file', path: 'servers.yaml' },
    fleet: {
      etcd: { endpoints: ['http://127.0.0.1:2379'] },
      ...(redis ? { redis: { url: 'redis://127.0.0.1:6379' } } : {}),
    },
    policies: rule({ rate: '10/s', scope: 'fleet' }),
  });

  it('refuses scope: fleet without fleet.redis, naming the rule', async () => {
    await expect(validateConfig(config('net', false), '/tmp/x/switchboard.yaml', '')).rejects.toThrow(
      /policies\[0\] \(shared\).*scope: fleet needs fleet\.redis/,
    );
  });

  it('accepts it with fleet.redis on the net panel, refuses it on the worker panel', async () => {
    await expect(validateConfig(config('net', true), '/tmp/x/switchboard.yaml', '')).resolves.toBeDefined();
    await expect(validateConfig(config('worker', true), '/tmp/x/switchboard.yaml', '')).rejects.toThrow(
      /policies\[0\] \(shared\).*not served by the worker panel/,
    );
  });
});
