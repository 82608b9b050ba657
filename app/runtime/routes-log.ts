/**
 * Says when routes change (issue 45 item 6). After every snapshot the runtime applies (a book's
 * own change: a file saved, an etcd watch event, a SQLite commit; or a reload's new book), it
 * tells this log, which reads the book's `DescribedRoutes` (src/contracts/types.ts):
 *
 *   first snapshot          ─► info  "routes loaded"   book source version changedAt hosts products clusters backends
 *   origin (book, source,
 *   version) differs        ─► info  "routes updated"  the same fields; `updates` + 1 (/metrics)
 *                            ─► debug "routes changed"  added / removed hosts, products, clusters, backends
 *   same origin             ─► nothing (a reload that rebuilt the same routes)
 *
 * 1. Counting is one pass over the snapshot's inventory (made once per snapshot, by the book);
 *    the differences are computed only while the level is `debug` or more verbose.
 * 2. A book that does not describe its routes (a custom book, a worker thread's copy of the
 *    main thread's snapshot) is not logged: the worker panel's main thread logs for all threads.
 */
import type { Logger } from '../../src/base/log.ts';
import {
  type AddressBook,
  describesRoutes,
  type RoutesInventory,
  type RoutesOrigin,
} from '../../src/contracts/types.ts';

/** Names listed per kind in a `routes changed` line; the counts are always whole. */
const LISTED = 20;

/** The routes serving now as the log last saw them (GET /routes, /metrics). */
export interface RoutesState {
  readonly origin: RoutesOrigin;
  readonly counts: { hosts: number; products: number; clusters: number; backends: number };
  /** `routes updated` lines since start. */
  readonly updates: number;
}

type Kind = keyof RoutesInventory;
const KINDS: readonly Kind[] = ['hosts', 'products', 'clusters', 'backends'];

function countsOf(inventory: RoutesInventory | undefined): RoutesState['counts'] {
  return {
    hosts: inventory?.hosts.length ?? 0,
    products: inventory?.products.length ?? 0,
    clusters: inventory?.clusters.length ?? 0,
    backends: inventory?.backends.length ?? 0,
  };
}

/** `a` minus `b`: at most LISTED names, and how many in all. */
function minus(a: readonly string[], b: readonly string[]): { names: string[]; count: number } {
  const other = new Set(b);
  const names: string[] = [];
  let count = 0;
  for (const n of a) {
    if (other.has(n)) continue;
    count++;
    if (names.length < LISTED) names.push(n);
  }
  return { names, count };
}

/** What was added and removed between two inventories, kinds with no change left out. */
export function inventoryChanges(before: RoutesInventory, after: RoutesInventory): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kind of KINDS) {
    const added = minus(after[kind], before[kind]);
    const removed = minus(before[kind], after[kind]);
    if (added.count > 0) out[`${kind}Added`] = added.count > LISTED ? { ...added } : added.names;
    if (removed.count > 0) out[`${kind}Removed`] = removed.count > LISTED ? { ...removed } : removed.names;
  }
  return out;
}

/** The `routes loaded` / `routes updated` lines of one runtime, across reloads. */
export class RoutesLog {
  readonly #logger: Logger;
  #state: RoutesState | undefined;
  #inventory: RoutesInventory | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** The routes serving now, as last logged (undefined: the book does not describe them). */
  get state(): RoutesState | undefined {
    return this.#state;
  }

  /** `book` has just been applied (its snapshot swapped, or it replaced the previous book). */
  applied(book: AddressBook): void {
    if (!describesRoutes(book)) return;
    const origin = book.routesOrigin();
    if (origin === undefined) return;
    const last = this.#state?.origin;
    if (
      last !== undefined &&
      last.book === origin.book &&
      last.source === origin.source &&
      last.version === origin.version
    )
      return;
    const inventory = book.routesInventory();
    const counts = countsOf(inventory);
    const first = this.#state === undefined;
    this.#state = { origin, counts, updates: (this.#state?.updates ?? 0) + (first ? 0 : 1) };
    this.#logger.info({ ...origin, ...counts }, first ? 'routes loaded' : 'routes updated');
    const before = this.#inventory;
    this.#inventory = inventory;
    if (first || before === undefined || inventory === undefined || !this.#logger.isLevelEnabled('debug')) return;
    this.#logger.debug(
      { book: origin.book, version: origin.version, ...inventoryChanges(before, inventory) },
      'routes changed',
    );
  }
}
