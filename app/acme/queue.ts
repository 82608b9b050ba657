/**
 * The ACME order queue: one order at a time (a CA's rate limits, and one challenge set per name
 * at once), best rank first (select.ts: configured, held, new), within each account's
 * `maxOrdersPerHour` (budget.ts):
 *
 *   add(item) ─► pending ─► pump: the best-ranked item whose account has budget ─► run(item)
 *                              └─ every item waits for budget ─► one log line per change,
 *                                 wake when the first slot frees
 *
 * `spend(item)` is called by `run` just before it calls the CA, so a storage probe that fails
 * first spends nothing.
 */
import type { Logger } from '../../src/base/log.ts';
import { OrderBudget } from './budget.ts';

/** What the queue needs of a name. */
export interface Queued {
  readonly name: string;
  readonly section: {
    readonly listener: string;
    /** The account (directory + storage) whose budget the order spends. */
    readonly account: string;
    readonly spec: { readonly maxOrdersPerHour: number };
  };
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Serial, ranked, budgeted orders. */
export class OrderQueue<T extends Queued> {
  readonly #run: (item: T) => Promise<void>;
  readonly #rank: (item: T) => number;
  readonly #logger: Logger;
  readonly #pending = new Set<T>();
  readonly #budgets = new Map<string, OrderBudget>();
  /** Per listener: the names last logged as waiting for budget (a line only when it changes). */
  readonly #logged = new Map<string, string>();
  #running = false;
  #wake: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(run: (item: T) => Promise<void>, rank: (item: T) => number, logger: Logger) {
    this.#run = run;
    this.#rank = rank;
    this.#logger = logger;
  }

  /** Queues `item` (once; a queued item is not queued twice) and starts it if nothing runs. */
  add(item: T): void {
    if (this.#closed) return;
    this.#pending.add(item);
    this.#pump();
  }

  /** Forgets a queued item (its name left the config). */
  delete(item: T): void {
    this.#pending.delete(item);
  }

  /** Records an order placed for `item`'s account now. */
  spend(item: T): void {
    this.#budget(item.section.account).take(Date.now());
    this.#logged.delete(item.section.listener);
  }

  /** Forgets the budgets of accounts no section uses any more. */
  keepAccounts(accounts: ReadonlySet<string>): void {
    for (const a of this.#budgets.keys()) if (!accounts.has(a)) this.#budgets.delete(a);
  }

  /** Starts nothing more; an order in flight finishes. */
  close(): void {
    this.#closed = true;
    if (this.#wake !== undefined) clearTimeout(this.#wake);
    this.#pending.clear();
  }

  #budget(account: string): OrderBudget {
    const b = this.#budgets.get(account) ?? new OrderBudget();
    this.#budgets.set(account, b);
    return b;
  }

  #pump(): void {
    if (this.#running || this.#closed) return;
    const now = Date.now();
    let best: T | undefined;
    let wakeAt = Number.POSITIVE_INFINITY;
    const waiting = new Map<string, { item: T; names: string[] }>();
    for (const item of this.#pending) {
      const at = this.#budget(item.section.account).nextAt(now, item.section.spec.maxOrdersPerHour);
      if (at > now) {
        wakeAt = Math.min(wakeAt, at);
        const w = waiting.get(item.section.listener) ?? { item, names: [] };
        w.names.push(item.name);
        waiting.set(item.section.listener, w);
      } else if (best === undefined || this.#rank(item) < this.#rank(best)) best = item;
    }
    for (const { item, names } of waiting.values()) this.#logWaiting(item, names, wakeAt);
    if (best === undefined) {
      if (wakeAt !== Number.POSITIVE_INFINITY) {
        if (this.#wake !== undefined) clearTimeout(this.#wake);
        this.#wake = setTimeout(() => this.#pump(), Math.min(wakeAt - now, MAX_TIMER_MS));
        this.#wake.unref();
      }
      return;
    }
    this.#pending.delete(best);
    this.#running = true;
    void this.#run(best).finally(() => {
      this.#running = false;
      this.#pump();
    });
  }

  #logWaiting(item: T, names: string[], at: number): void {
    const { listener, spec } = item.section;
    const key = names.join(',');
    if (this.#logged.get(listener) === key) return;
    this.#logged.set(listener, key);
    this.#logger.warn(
      {
        listener,
        maxOrdersPerHour: spec.maxOrdersPerHour,
        waiting: names.slice(0, 50),
        until: new Date(at).toISOString(),
      },
      `acme: acme.maxOrdersPerHour (${spec.maxOrdersPerHour}) reached; ${names.length} order(s) wait`,
    );
  }
}
