/**
 * Lines written and skipped, by the rule that decided them, since the process started: kept by
 * the runtime across reloads (a rule keeps its counts while its label stays), read by /metrics
 * (`switchboard_access_log_lines_total{outcome,rule}`).
 */

/** The counts of one rule label: `written`, `skipped`. */
export interface LineCounts {
  written: number;
  skipped: number;
}

/** The label of lines no rule matched (they are written). */
export const NO_RULE = 'none';

/** Counts by rule label; a compiled rule holds its label's slot, so counting is a field increment. */
export class AccessLogCounts {
  readonly #slots = new Map<string, LineCounts>();

  /** The slot of `label` (made on first use). */
  slot(label: string): LineCounts {
    let s = this.#slots.get(label);
    if (s === undefined) {
      s = { written: 0, skipped: 0 };
      this.#slots.set(label, s);
    }
    return s;
  }

  /** Every label with its counts. */
  entries(): IterableIterator<[string, LineCounts]> {
    return this.#slots.entries();
  }
}
