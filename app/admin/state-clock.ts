/**
 * How long each backend has been in its current state, per cluster, for the dashboard's
 * "in state" column (HAProxy's `LastChg`).
 *
 * 1. `observe(key, state, now, upSince)` is called for every (backend, cluster) on each
 *    dashboard sample (once a second, dashboard.ts) and on each `GET /ui/data`; a state other than
 *    the one seen last starts a new period at `now`.
 * 2. `up` is timed from the registry's `upSince` when it has one (the exact moment a check or an
 *    enable brought it back); other states to within the sampling second.
 * 3. A state seen since the dashboard started has `exact: false`: it began before that, so the
 *    page says "≥ 3m". Keys not observed in a call to `retain` are forgotten (bounded by the config).
 */

/** One period: the state and since when (ms since epoch); `exact` false when it began before the clock. */
export interface StatePeriod {
  readonly state: string;
  readonly since: number;
  readonly exact: boolean;
}

/** Remembers when each key entered the state it is in. */
export class StateClock {
  readonly #startedAt: number;
  #periods = new Map<string, StatePeriod>();

  constructor(now = Date.now()) {
    this.#startedAt = now;
  }

  /** The period `key` is in, given the state it shows now. */
  observe(key: string, state: string, now: number, upSince = 0): StatePeriod {
    const last = this.#periods.get(key);
    let period: StatePeriod;
    if (state === 'up' && upSince > 0) period = { state, since: upSince, exact: upSince >= this.#startedAt };
    else if (last !== undefined && last.state === state) period = last;
    else if (last === undefined) period = { state, since: this.#startedAt, exact: false };
    else period = { state, since: now, exact: true };
    this.#periods.set(key, period);
    return period;
  }

  /** Forgets every key but `keys` (backends removed by a reload). */
  retain(keys: ReadonlySet<string>): void {
    for (const k of this.#periods.keys()) if (!keys.has(k)) this.#periods.delete(k);
  }
}
