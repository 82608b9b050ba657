/**
 * `acme.maxOrdersPerHour`: a sliding window of the times orders were placed with one account
 * (directory + storage). The manager asks `nextAt` before it calls the CA and `take`s a slot
 * when it does; a probe that fails, or a name left waiting, spends nothing.
 */
const WINDOW_MS = 3_600_000;

/** The orders one account placed in the last hour. */
export class OrderBudget {
  readonly #times: number[] = [];

  /** Now when fewer than `limit` orders were placed in the last hour, else when the oldest leaves the window. */
  nextAt(now: number, limit: number): number {
    while (this.#times.length > 0 && this.#times[0]! <= now - WINDOW_MS) this.#times.shift();
    if (this.#times.length < limit) return now;
    return this.#times[this.#times.length - limit]! + WINDOW_MS;
  }

  /** Records an order placed at `now`. */
  take(now: number): void {
    this.#times.push(now);
  }
}
