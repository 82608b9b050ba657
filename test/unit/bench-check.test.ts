/**
 * `npm run bench -- --check`: rows judged against bench/targets.json (goal met or missed, guard
 * held or regressed), unmeasured rows never failing, and malformed target files refused.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { check, failed, loadTargets, type Targets, targetsFile } from '../../bench/lib/check.ts';
import { type Cell, type Row, summarise } from '../../bench/lib/stats.ts';

const row = (scenario: string, target: string, median: number, extra: Record<string, number> = {}): Row => ({
  scenario,
  target,
  unit: 'req/s',
  median,
  extra,
  ratios: {},
  samples: [median],
});

const targets: Targets = {
  noise: 0.1,
  rules: [
    { scenario: 'keepalive', target: 'swb', vs: 'node-pipe', min: 1.0, guard: 0.8 },
    { scenario: 'idle', target: 'swb', vs: 'node-pipe', max: 1.2, guard: 1.4 },
    { scenario: 'h2', target: 'swb-h2', extra: 'p99ms', max: 5, guard: 40 },
    { scenario: 'h2', target: 'swb-h2', vs: 'nginx-h2', min: 0.6, guard: 0.3 },
  ],
};

describe('bench --check', () => {
  it.each([
    // [keepalive swb, idle swb, p99, expected verdicts]
    [1000, 1.0, 4, ['met/held', 'met/held', 'met/held']],
    [850, 1.3, 30, ['missed/held', 'missed/held', 'missed/held']],
    [750, 1.5, 42, ['missed/within noise', 'missed/within noise', 'missed/within noise']],
    [500, 2.0, 80, ['missed/regressed', 'missed/regressed', 'missed/regressed']],
  ])('keepalive %d vs pipe 1000, idle ×%d, p99 %d ms', (ka, idle, p99, expected) => {
    const rows = [
      row('keepalive', 'node-pipe', 1000),
      row('keepalive', 'swb', ka),
      row('idle', 'node-pipe', 10),
      row('idle', 'swb', idle * 10),
      row('h2', 'swb-h2', 100, { p99ms: p99 }),
    ];
    const verdicts = check(rows, targets);
    expect(verdicts.slice(0, 3).map((v) => `${v.goal}/${v.guard}`)).toEqual(expected);
    // nginx-h2 was not measured: reported, never failed
    expect(verdicts[3]).toMatchObject({ goal: 'not measured', guard: 'not measured' });
    const regressed = expected.some((e) => e.endsWith('regressed'));
    expect(failed(verdicts, false)).toBe(regressed);
    expect(failed(verdicts, true)).toBe(expected.some((e) => e.startsWith('missed')));
  });

  it('a wider margin tolerates what the default noise calls a regression', () => {
    const rows = [row('keepalive', 'node-pipe', 1000), row('keepalive', 'swb', 500)];
    expect(check(rows, targets)[0]?.guard).toBe('regressed');
    expect(check(rows, targets, 0.5)[0]?.guard).toBe('within noise');
  });

  it('loads the shipped targets file and refuses malformed ones with the rule index', () => {
    const shipped = loadTargets(targetsFile(resolve(import.meta.dirname, '..', '..')));
    expect(shipped.rules.length).toBeGreaterThan(5);
    const dir = mkdtempSync(join(tmpdir(), 'swb-targets-'));
    const bad = [
      [{ noise: 2, rules: [] }, /noise must be/],
      [
        { noise: 0.1, rules: [{ scenario: 'a', target: 'b', min: 1, guard: 1 }] },
        /rules\[0\]: exactly one of vs and extra/,
      ],
      [{ noise: 0.1, rules: [{ scenario: 'a', target: 'b', vs: 'c', min: 1 }] }, /rules\[0\]: guard/],
    ] as const;
    for (const [content, message] of bad) {
      const file = join(dir, 'targets.json');
      writeFileSync(file, JSON.stringify(content));
      expect(() => loadTargets(file)).toThrow(message);
    }
  });
});

describe('bench --paired', () => {
  const cell = (target: string, values: number[], pairs?: number[]): Cell => ({
    scenario: 'newconn',
    target,
    rounds: values.map((value) => ({ value, unit: 'conn/s', higherIsBetter: true })),
    ...(pairs === undefined ? {} : { pairs: { vs: 'node-pipe', ratios: pairs } }),
  });

  it('takes the pivot column and the check from the median of the per-round ratios', () => {
    // The medians alone (900 / 1000) say 0.9; measured next to the pivot each round it was 1.05.
    const rows = summarise(
      [cell('node-pipe', [1000, 1200, 800, 1000, 1000, 1000]), cell('swb', [900, 1260, 840], [0.9, 1.05, 1.05])],
      ['node-pipe'],
    );
    const swb = rows.find((r) => r.target === 'swb');
    expect(swb?.paired).toEqual({ vs: 'node-pipe', ratio: 1.05, ratios: [0.9, 1.05, 1.05] });
    expect(swb?.ratios['node-pipe']).toBe(1.05);
    const rule = { scenario: 'newconn', target: 'swb', vs: 'node-pipe', min: 1.0, guard: 0.95 };
    expect(check(rows, { noise: 0.1, rules: [rule] })[0]).toMatchObject({ value: 1.05, goal: 'met', guard: 'held' });
  });

  it('divides the two paired ratios for a rule between two rows paired with the same pivot', () => {
    // The medians say 0.5 (1000 / 2000); each against the pivot measured right before it, 1.2 / 1.6.
    const rows = summarise(
      [cell('node-pipe', [1000]), cell('worker-2', [2000], [1.6]), cell('worker-4', [1000], [1.2])],
      ['node-pipe'],
    );
    const rule = { scenario: 'newconn', target: 'worker-4', vs: 'worker-2', min: 0.8, guard: 0.7 };
    const verdict = check(rows, { noise: 0.1, rules: [rule] })[0];
    expect(verdict?.value).toBeCloseTo(0.75, 9);
    expect(verdict).toMatchObject({ goal: 'missed', guard: 'held' });
  });

  it('keeps the ratio of medians against a row that was not paired', () => {
    const rows = summarise(
      [cell('node-pipe', [1000]), cell('haproxy-tcp', [2000]), cell('swb', [1000], [1.2])],
      ['node-pipe'],
    );
    const rule = { scenario: 'newconn', target: 'swb', vs: 'haproxy-tcp', min: 1.0, guard: 0.4 };
    expect(check(rows, { noise: 0.1, rules: [rule] })[0]).toMatchObject({ value: 0.5, goal: 'missed' });
  });
});
