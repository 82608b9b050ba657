/**
 * `log.access.rules` compiled once per config version into one judge:
 *
 *   line ─► rule 0 matches? ─► yes: log / skip (sample: a draw decides) ─► counted by the rule
 *              │ no
 *              ▼
 *           rule 1 … ─► none matched: written (counted as `none`)
 *
 * 1. A rule matches when every key it gives matches (none given: every line): `statuses` is a
 *    600-entry table (`0` for a line without a status), `results`, `products` and `clusters`
 *    are sets, `minDuration` compares `durationMs`, `when` is a compiled condition over the
 *    line (`line-request.ts`, only the primitives of `primitives.ts`).
 * 2. The cheap keys are tested before `when`; a rule's keys are tested in that order, and a
 *    line stops at the first rule that matches.
 * 3. `sample: r` writes a line the rule matched when a draw of `random` is below `r`: the
 *    runtime's seeded generator (mulberry32, seeded once per process: `src/base/random.ts`),
 *    so a test that seeds it gets the same lines every run.
 * 4. The verdict is made before anything is serialised: a skipped line costs the tests of the
 *    rules it reached and one count.
 */
import type { AccessRecord } from '../base/log.ts';
import type { Random } from '../base/random.ts';
import { compileCondition } from '../condition/index.ts';
import type { AccessLogRuleConfig } from '../config/access-log.ts';
import { type AccessLogCounts, type LineCounts, NO_RULE } from './counts.ts';
import { LineRequest } from './line-request.ts';
import { checkLinePrimitives } from './primitives.ts';

/** A compiled rule: does it match a line, and does it write it. */
interface Rule {
  readonly matches: (record: AccessRecord) => boolean;
  readonly log: boolean;
  readonly sample: number | undefined;
  readonly counts: LineCounts;
}

/** How to compile: where the rules sit (error paths), the draws of `sample`, the counts. */
export interface AccessRulesOptions {
  /** The config path of the list, e.g. `log.access.rules`. */
  readonly where: string;
  readonly random: Random;
  readonly counts: AccessLogCounts;
}

/** The compiled rules: `keep` judges one line (and counts it). */
export interface AccessRules {
  /** True when `record`'s line is to be written; counts the verdict under the deciding rule. */
  keep(record: AccessRecord): boolean;
}

/** A rule's label in /metrics: its name, else `rules[i]`. */
export function ruleLabel(rule: AccessLogRuleConfig, index: number): string {
  return rule.name ?? `rules[${index}]`;
}

function statusTable(statuses: readonly (number | string)[]): Uint8Array {
  const table = new Uint8Array(600);
  for (const s of statuses) {
    if (typeof s === 'number') table[s] = 1;
    else {
      const base = Number(s[0]) * 100;
      table.fill(1, base, base + 100);
    }
  }
  return table;
}

/** The match test of one rule: its keys, cheap ones first, all of which must hold. */
function matcher(rule: AccessLogRuleConfig, where: string, view: LineRequest): (record: AccessRecord) => boolean {
  const tests: ((r: AccessRecord) => boolean)[] = [];
  if (rule.statuses !== undefined) {
    const table = statusTable(rule.statuses);
    tests.push((r) => table[r.status ?? 0] === 1);
  }
  if (rule.results !== undefined) {
    const results = new Set(rule.results);
    tests.push((r) => results.has(r.result));
  }
  if (rule.minDuration !== undefined) {
    const min = rule.minDuration;
    tests.push((r) => r.durationMs >= min);
  }
  if (rule.products !== undefined) {
    const products = new Set(rule.products);
    tests.push((r) => r.product !== undefined && products.has(r.product));
  }
  if (rule.clusters !== undefined) {
    const clusters = new Set(rule.clusters);
    tests.push((r) => r.cluster !== undefined && clusters.has(r.cluster));
  }
  if (rule.when !== undefined) {
    checkLinePrimitives(rule.when, `${where}.when`);
    const condition = compileCondition(rule.when, { where: `${where}.when` });
    tests.push((r) => condition(view.of(r)));
  }
  return (r) => {
    for (const t of tests) if (!t(r)) return false;
    return true;
  };
}

/** Compiles `rules`; throws a SwitchboardError naming the rule's path (`log.access.rules[1].when: …`). */
export function compileAccessRules(rules: readonly AccessLogRuleConfig[], options: AccessRulesOptions): AccessRules {
  const view = new LineRequest();
  const compiled: Rule[] = rules.map((rule, i) => ({
    matches: matcher(rule, `${options.where}[${i}]`, view),
    log: rule.log,
    sample: rule.sample,
    counts: options.counts.slot(ruleLabel(rule, i)),
  }));
  const none = options.counts.slot(NO_RULE);
  const random = options.random;
  return {
    keep(record) {
      for (const rule of compiled) {
        if (!rule.matches(record)) continue;
        const write = rule.log && (rule.sample === undefined || random() < rule.sample);
        if (write) rule.counts.written++;
        else rule.counts.skipped++;
        return write;
      }
      none.written++;
      return true;
    },
  };
}

/** Every problem of `rules`, one line per rule (empty when all compile): config load, so check, start and reload alike. */
export function accessRuleErrors(rules: readonly AccessLogRuleConfig[], where: string): string[] {
  const errors: string[] = [];
  const view = new LineRequest();
  rules.forEach((rule, i) => {
    try {
      matcher(rule, `${where}[${i}]`, view);
    } catch (e) {
      errors.push((e as Error).message);
    }
  });
  return errors;
}
