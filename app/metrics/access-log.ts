/**
 * `switchboard_access_log_lines_total{outcome,rule}` (issue 44 item 3): access lines written and
 * skipped by `log.access.rules`, by the rule that decided (its `name`, else `rules[i]`; `none`
 * for lines no rule matched, which are written), read from the runtime's counts at scrape time.
 * On the worker panel the main thread judges and writes the lines of every thread, so the
 * counts are the process's. Nothing is counted with `log.access: off`.
 */
import { Counter, type Registry } from 'prom-client';
import type { AccessLogCounts } from '../../src/access-log/index.ts';

/** Registers the counter on `registers`, read from `counts` at each scrape. */
export function accessLogLineCounter(registers: Registry[], counts: AccessLogCounts): void {
  new Counter({
    name: 'switchboard_access_log_lines_total',
    help: 'Access lines written or skipped by log.access.rules, by outcome and deciding rule (none: no rule matched)',
    labelNames: ['outcome', 'rule'],
    registers,
    collect() {
      this.reset();
      for (const [rule, c] of counts.entries()) {
        this.inc({ outcome: 'written', rule }, c.written);
        this.inc({ outcome: 'skipped', rule }, c.skipped);
      }
    },
  });
}
