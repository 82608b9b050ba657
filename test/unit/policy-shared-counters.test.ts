/**
 * The counter stores (src/policy/counters.ts, shared-counters.ts): one table of cases run
 * against the local store, the shared store and a second view attached to the shared store's
 * state, on a fake clock — GCRA (burst at one instant, the wait, keys apart, a bounded table),
 * in-flight slots (max, a release given back once, the table emptied), the store across
 * snapshots (an unchanged counter kept, a changed one fresh) and the rule set compiled on it.
 * Then what only the shared store does: two views count as one, a buffer too small, a worker's
 * holds forgotten, eviction in a full window.
 */
import { describe, expect, it } from 'vitest';
import type { RateSpec } from '../../src/contracts/policy.ts';
import { type CounterStore, LocalCounters } from '../../src/policy/counters.ts';
import { SharedCounters } from '../../src/policy/shared-counters.ts';
import { atRequest, compileRules, fakeClock } from '../harness/policy.ts';

const MiB = 1024 * 1024;
const STORES: readonly (readonly [string, () => CounterStore])[] = [
  ['local', () => new LocalCounters()],
  ['shared', () => SharedCounters.create({ bytes: 4 * MiB, concurrencyKeys: 1024 })],
  [
    'shared, a thread attached',
    () => SharedCounters.attach(SharedCounters.create({ bytes: 4 * MiB, concurrencyKeys: 1024 }).state),
  ],
];
const spec = (over: Partial<RateSpec> = {}): RateSpec => ({ rate: 10, per: 1000, burst: 10, maxKeys: 100, ...over });

describe.each(STORES)('counter store: %s', (_, make) => {
  it('GCRA: 10/s burst 10, 50 at one instant → exactly 10; one interval later exactly one more', () => {
    const c = make().rate('r#1', spec());
    const t = 1_000_000;
    const waits = Array.from({ length: 50 }, () => c.take('k', t));
    expect(waits.filter((w) => w === 0)).toHaveLength(10);
    expect(waits[10]).toBe(100);
    expect(c.take('k', t + 100)).toBe(0);
    expect(c.take('k', t + 100)).toBe(100);
  });

  it('GCRA: the wait shrinks with time (6/m burst 1); keys count apart', () => {
    const c = make().rate('r#1', spec({ rate: 6, per: 60_000, burst: 1 }));
    expect(c.take('a', 5_000)).toBe(0);
    expect(c.take('a', 5_000)).toBe(10_000);
    expect(c.take('a', 14_001)).toBe(999);
    expect(c.take('b', 14_001)).toBe(0);
    expect(c.take('a', 15_000)).toBe(0);
  });

  it('GCRA: a rate that is no whole number of ms per event (3/s) keeps the long-run rate', () => {
    const c = make().rate('r#1', spec({ rate: 3, burst: 1 }));
    let passed = 0;
    for (let t = 0; t < 10_000; t += 1) if (c.take('k', 1_000_000 + t) === 0) passed++;
    expect(passed).toBe(30);
  });

  it('GCRA: the key table is bounded (1000 keys, maxKeys 3: at most the table of 4)', () => {
    const c = make().rate('r#1', spec({ rate: 1, burst: 1, maxKeys: 3 }));
    for (let i = 0; i < 1000; i++) c.take(`10.0.${i >> 8}.${i & 255}`, 0);
    expect(c.size).toBeGreaterThan(0);
    expect(c.size).toBeLessThanOrEqual(4);
  });

  it('in-flight: max 2 held, the third refused; a release gives one slot back exactly once', () => {
    const c = make().concurrency('r#1', 2);
    const a = c.acquire('k');
    const b = c.acquire('k');
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(c.acquire('k')).toBeUndefined();
    expect(c.acquire('other')).toBeDefined();
    a?.release();
    a?.release();
    const d = c.acquire('k');
    expect(d).toBeDefined();
    expect(c.acquire('k')).toBeUndefined();
    b?.release();
    d?.release();
    expect(c.acquire('k')).toBeDefined();
  });

  it('in-flight: a key at zero leaves the table', () => {
    const c = make().concurrency('r#1', 5);
    const holds = Array.from({ length: 100 }, (_, i) => c.acquire(`k${i}`));
    expect(c.size).toBe(100);
    for (const h of holds) h?.release();
    expect(c.size).toBe(0);
  });

  it('next(): the same key and spec is the same counter with its state; another spec starts afresh', () => {
    const first = make();
    const rate = first.rate('r#1', spec({ burst: 1 }));
    const slots = first.concurrency('s#1', 1);
    expect(rate.take('k', 0)).toBe(0);
    const held = slots.acquire('k');
    const second = first.next();
    expect(second.rate('r#1', spec({ burst: 1 }))).toBe(rate);
    expect(second.rate('r#1', spec({ burst: 1 })).take('k', 0)).toBeGreaterThan(0);
    expect(second.rate('r#1', spec({ burst: 2 })).take('k', 0)).toBe(0);
    expect(second.rate('r#2', spec({ burst: 1 })).take('k', 0)).toBe(0);
    expect(second.concurrency('s#1', 1).acquire('k')).toBeUndefined();
    second.seal();
    expect([...second.entries()].map(([id]) => id.split(' ')[1])).toEqual(['r#1', 'r#1', 'r#2', 's#1']);
    held?.release();
    expect(second.concurrency('s#1', 1).acquire('k')).toBeDefined();
  });

  it('the rule set on the store: 50 requests at once → 10; an unchanged rule keeps its state across a recompile', () => {
    const clock = fakeClock();
    const rules = (burstB: number) => [
      {
        name: 'a',
        use: 'rate-limit',
        when: 'req_path_in("/a", false)',
        options: { key: 'rule', rate: '10/s', burst: 10 },
      },
      {
        name: 'b',
        use: 'rate-limit',
        when: 'req_path_in("/b", false)',
        options: { key: 'rule', rate: '10/s', burst: burstB },
      },
    ];
    const first = compileRules(rules(10), { now: clock.now, counters: make() });
    const passed = (set: typeof first, path: string, n: number) =>
      Array.from({ length: n }, () => set.request(atRequest({ path })).rule).filter((r) => r === undefined).length;
    expect(passed(first, '/a', 50)).toBe(10);
    expect(passed(first, '/b', 50)).toBe(10);
    const second = compileRules(rules(11), { now: clock.now, counters: first.counters.next() });
    expect(passed(second, '/a', 5)).toBe(0);
    expect(passed(second, '/b', 50)).toBe(11);
  });
});

describe('shared counter store', () => {
  it('two views of one state count as one: a burst and a cap shared, a hold released through either', () => {
    const main = SharedCounters.create({ bytes: MiB });
    const thread = SharedCounters.attach(main.state);
    const a = main.rate('r#1', spec({ burst: 4 }));
    const b = thread.rate('r#1', spec({ burst: 4 }));
    const waits = [a, b, a, b, a, b].map((c) => c.take('k', 0));
    expect(waits.filter((w) => w === 0)).toHaveLength(4);
    const held = main.concurrency('s#1', 1).acquire('k');
    expect(thread.concurrency('s#1', 1).acquire('k')).toBeUndefined();
    held?.release();
    expect(thread.concurrency('s#1', 1).acquire('k')).toBeDefined();
  });

  it('a buffer too small: the counter counts in this thread, full is set, 2 × needed fits', () => {
    const small = SharedCounters.create({ bytes: 64 * 1024, regions: 8 });
    const fits = small.rate('r#1', spec({ maxKeys: 1000 }));
    const over = small.rate('r#2', spec({ maxKeys: 100_000 }));
    expect(small.full).toBe(true);
    expect(fits.take('k', 0)).toBe(0);
    expect(over.take('k', 0)).toBe(0);
    const bigger = SharedCounters.create({ bytes: 2 * small.needed, regions: 8 });
    bigger.rate('r#1', spec({ maxKeys: 1000 }));
    bigger.rate('r#2', spec({ maxKeys: 100_000 }));
    expect(bigger.full).toBe(false);
    expect(bigger.needed).toBe(small.needed);
  });

  it('a full directory: more regions than entries count in this thread and set full', () => {
    const store = SharedCounters.create({ bytes: MiB, regions: 2 });
    store.rate('r#1', spec());
    store.rate('r#2', spec());
    expect(store.full).toBe(false);
    store.rate('r#3', spec());
    expect(store.full).toBe(true);
  });

  it('forgetHolds (a worker died): the counts are cleared, and an old release takes nothing from a new hold', () => {
    const store = SharedCounters.create({ bytes: MiB, concurrencyKeys: 64 });
    const c = store.concurrency('s#1', 1);
    const old = c.acquire('k');
    expect(c.acquire('k')).toBeUndefined();
    store.forgetHolds();
    expect(c.size).toBe(0);
    const fresh = c.acquire('k');
    expect(fresh).toBeDefined();
    old?.release();
    expect(c.acquire('k')).toBeUndefined();
    fresh?.release();
    expect(c.acquire('k')).toBeDefined();
  });

  it('a full probe window evicts the oldest TAT: the evicted key comes back with at most a fresh burst', () => {
    const c = SharedCounters.create({ bytes: MiB }).rate('r#1', spec({ rate: 1, burst: 2, maxKeys: 2 }));
    expect([c.take('a', 0), c.take('a', 0), c.take('a', 0)]).toEqual([0, 0, 1000]);
    for (let i = 0; i < 50; i++) c.take(`k${i}`, 10);
    expect(c.size).toBe(2);
    const back = [c.take('a', 10), c.take('a', 10), c.take('a', 10)];
    expect(back.filter((w) => w === 0).length).toBeLessThanOrEqual(2);
    expect(back[2]).toBeGreaterThan(0);
  });

  it('a fresh region per changed rule; needed counts this snapshot only', () => {
    const store = SharedCounters.create({ bytes: MiB, regions: 16 });
    store.rate('r#1', spec({ maxKeys: 2 }));
    const once = store.needed;
    store.rate('r#1', spec({ maxKeys: 2 }));
    expect(store.needed).toBe(once);
    const next = store.next();
    next.rate('r#1', spec({ maxKeys: 2 }));
    expect(next.needed).toBe(once);
  });
});
