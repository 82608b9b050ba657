/**
 * `--check`: the same-run ratios of a bench run against bench/targets.json.
 * A rule compares a row with another row of the same scenario (`vs`: the ratio of medians; with
 * `--paired`, the median of the per-round ratios when `vs` is the row's pivot, and the ratio of
 * the two rows' paired ratios when both were paired with the same pivot) or
 * reads one of its extra numbers (`extra`, e.g. p99ms). It carries two levels in the same
 * direction: the goal (`min` or `max`, issue 18's target: reported met or missed) and the
 * `guard` (the level last measured on a quiet machine: falling past it by more than the
 * tolerance is a regression, and a regression fails the check). `--strict` fails on a missed
 * goal too. Rows a run did not measure are reported as such and never fail the check.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Row, textTable } from './stats.ts';

/** One target from targets.json. */
export interface Rule {
  readonly scenario: string;
  readonly target: string;
  /** The row the ratio is taken against (same scenario). */
  readonly vs?: string;
  /** A key of the row's extra numbers instead of a ratio (e.g. p99ms). */
  readonly extra?: string;
  readonly min?: number;
  readonly max?: number;
  /** The regression floor (for `min` rules) or ceiling (for `max` rules). */
  readonly guard: number;
}

/** The parsed targets file. */
export interface Targets {
  readonly noise: number;
  readonly rules: readonly Rule[];
  readonly reload?: { readonly p99DuringOverBeforeMax: number };
  /** bench/policy-list-load.ts: a 1,000,000-entry list's load time and p99 during over before. */
  readonly policyListLoad?: { readonly loadMsMax: number; readonly p99DuringOverBeforeMax: number };
}

/** What one rule came to: the goal met or missed, and whether the guard held. */
export interface Verdict {
  readonly rule: Rule;
  readonly value?: number;
  readonly goal: 'met' | 'missed' | 'not measured';
  readonly guard: 'held' | 'within noise' | 'regressed' | 'not measured';
}

/** Reads and checks bench/targets.json (or `file`); a malformed file throws with its path. */
export function loadTargets(file: string): Targets {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Partial<Targets>;
  const where = (i: number, what: string) => new Error(`${file}: rules[${i}]: ${what}`);
  if (typeof raw.noise !== 'number' || raw.noise < 0 || raw.noise >= 1)
    throw new Error(`${file}: noise must be a number in [0, 1)`);
  if (!Array.isArray(raw.rules)) throw new Error(`${file}: rules must be a list`);
  raw.rules.forEach((r, i) => {
    if (typeof r.scenario !== 'string' || typeof r.target !== 'string')
      throw where(i, 'scenario and target are required');
    if ((r.vs === undefined) === (r.extra === undefined)) throw where(i, 'exactly one of vs and extra');
    if ((r.min === undefined) === (r.max === undefined)) throw where(i, 'exactly one of min and max');
    if (typeof r.guard !== 'number') throw where(i, 'guard (a number) is required');
  });
  return raw as Targets;
}

/** The default targets file beside bench/run.ts. */
export const targetsFile = (root: string) => join(root, 'bench', 'targets.json');

/** The measured value a rule reads from `rows`, or undefined when the run did not measure it. */
function measured(rule: Rule, rows: readonly Row[]): number | undefined {
  const row = rows.find((r) => r.scenario === rule.scenario && r.target === rule.target);
  if (row === undefined) return undefined;
  if (rule.extra !== undefined) return row.extra[rule.extra];
  if (row.paired !== undefined && row.paired.vs === rule.vs) return row.paired.ratio;
  const base = rows.find((r) => r.scenario === rule.scenario && r.target === rule.vs);
  if (base === undefined) return undefined;
  // Both rows paired with the same pivot: each one's ratio to it, so neither row's place in the
  // run moves the result (worker-4 against worker-2).
  if (row.paired !== undefined && base.paired?.vs === row.paired.vs && base.paired.ratio > 0)
    return row.paired.ratio / base.paired.ratio;
  if (!(base.median > 0)) return undefined;
  return row.median / base.median;
}

/** Judges `value` against the guard, in the direction of the rule, with `tolerance` (a fraction). */
export function judgeGuard(value: number, rule: Rule, tolerance: number): Verdict['guard'] {
  if (rule.min !== undefined) {
    if (value >= rule.guard) return 'held';
    return value >= rule.guard * (1 - tolerance) ? 'within noise' : 'regressed';
  }
  if (value <= rule.guard) return 'held';
  return value <= rule.guard * (1 + tolerance) ? 'within noise' : 'regressed';
}

const goalMet = (value: number, rule: Rule) =>
  rule.min !== undefined ? value >= rule.min : value <= (rule.max as number);

/** Every rule's verdict for a run's rows; `tolerance` defaults to the file's noise. */
export function check(rows: readonly Row[], targets: Targets, tolerance = targets.noise): Verdict[] {
  return targets.rules.map((rule) => {
    const value = measured(rule, rows);
    if (value === undefined || !Number.isFinite(value)) return { rule, goal: 'not measured', guard: 'not measured' };
    return { rule, value, goal: goalMet(value, rule) ? 'met' : 'missed', guard: judgeGuard(value, rule, tolerance) };
  });
}

/** True when the verdicts fail the check (a regression; with `strict`, a missed goal too). */
export const failed = (verdicts: readonly Verdict[], strict: boolean) =>
  verdicts.some((v) => v.guard === 'regressed' || (strict && v.goal === 'missed'));

/** The verdicts as a text table. */
export function formatVerdicts(verdicts: readonly Verdict[]): string {
  const lines = verdicts.map((v) => {
    const what = v.rule.extra === undefined ? `×${v.rule.vs}` : v.rule.extra;
    const op = v.rule.min !== undefined ? '≥' : '≤';
    const got = v.value === undefined ? '-' : v.value.toFixed(2);
    const goal = `${op} ${v.rule.min ?? v.rule.max}`;
    return [v.rule.scenario, v.rule.target, what, got, goal, v.goal, `${op} ${v.rule.guard}`, v.guard];
  });
  return textTable([['scenario', 'target', 'measure', 'got', 'goal', '', 'guard', ''], ...lines]);
}
