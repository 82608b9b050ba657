/**
 * What the `bfe`, `sqlite` and `etcd` books have in common (README.md): one immutable compiled
 * view, swapped whole, and every read the runtime and the CLI make of it. A subclass only says
 * where the table comes from (`start`, `close`, its refresh loop) and calls `swapLive` (or
 * `swap`) with a new view or `keepPrevious` with the error that stopped one. With a last-good
 * cache (`last-good.ts`), `swapLive` also saves the data the view came from, and
 * `startFromLastGood` serves that data, marked stale, when the store does not answer at start.
 */
import { SwitchboardError } from '../../src/base/errors.ts';
import type { PluginContext } from '../../src/contracts/plugin.ts';
import type {
  AddressBook,
  BackendEntry,
  BackendGroups,
  BackendLister,
  Candidates,
  DescribedRoutes,
  Request,
  RoutesInventory,
  RoutesOrigin,
  RoutingTableSource,
} from '../../src/contracts/types.ts';
import { formatAge, type LastGoodFile } from './last-good.ts';

/**
 * One immutable compiled view of a source: a bfe `Snapshot` (which implements it) or the
 * classic host → backends list of the sqlite book.
 */
export interface BookView {
  /** The plain data it was compiled from (a RoutingTable, or the classic list). */
  readonly table: unknown;
  findAddresses(request: Request): Candidates | undefined;
  backends(): Iterable<BackendEntry>;
  /** The same entries in groups kept while unchanged (`BackendGroups`), when the view has them. */
  backendGroups?(): readonly (readonly BackendEntry[])[];
  /** Its hosts, products, clusters and backends by name (`DescribedRoutes`), when the view can say. */
  inventory?(): RoutesInventory;
}

/** An address book over one swappable BookView; subclasses supply the source. */
export abstract class SnapshotBook
  implements AddressBook, RoutingTableSource, BackendLister, BackendGroups, DescribedRoutes
{
  /** `address-books.<name>`: the start of every log line and error of this book. */
  protected readonly label: string;
  protected readonly context: PluginContext;
  #view: BookView | undefined;
  /** Increases by one on every snapshot swap. */
  version = 0;
  /** The error of the last failed refresh, cleared by a good one. */
  lastError: string | undefined;
  /** Set while the view came from the last-good cache rather than the store: when it was saved. */
  staleSince: Date | undefined;
  readonly #lastGood: LastGoodFile | undefined;
  /** Where the view serving now came from, in the store's own terms (`swap`'s `origin`). */
  #origin: RoutesOrigin | undefined;

  constructor(label: string, context: PluginContext, lastGood?: LastGoodFile) {
    this.label = label;
    this.context = context;
    this.#lastGood = lastGood;
  }

  /** The book's last-good cache file, when it has one (`cache:`). */
  get lastGood(): LastGoodFile | undefined {
    return this.#lastGood;
  }

  abstract start(): Promise<void>;
  abstract close(): Promise<void>;

  /** Synchronous lookup on the current view. */
  findAddresses(request: Request): Candidates | undefined {
    return this.#view?.findAddresses(request);
  }

  /** The plain data of the current view (undefined before `start`). */
  routingTable(): unknown {
    return this.#view?.table;
  }

  /** Every backend of the current view with its cluster's policy. */
  listBackends(): Iterable<BackendEntry> {
    return this.#view?.backends() ?? [];
  }

  /** The current view's backends in groups kept while unchanged (undefined: it has none). */
  backendGroups(): readonly (readonly BackendEntry[])[] | undefined {
    return this.#view?.backendGroups?.();
  }

  /** Where the view serving now came from and the store's version of it (undefined: the subclass does not say). */
  routesOrigin(): RoutesOrigin | undefined {
    return this.#origin;
  }

  /** What the view serving now holds, by name (undefined before the first swap, or for a view that cannot say). */
  routesInventory(): RoutesInventory | undefined {
    return this.#view?.inventory?.();
  }

  /** The view serving now (undefined before the first swap). */
  protected get view(): BookView | undefined {
    return this.#view;
  }

  /** True once a first view has been swapped in. */
  protected get loaded(): boolean {
    return this.#view !== undefined;
  }

  /**
   * Replaces the view (one reference), bumps `version` and tells the runtime; `origin`: where
   * the view came from in the store's own terms (`routesOrigin`, the `routes updated` line).
   */
  protected swap(view: BookView, origin?: RoutesOrigin): void {
    this.#view = view;
    this.#origin = origin;
    this.version++;
    this.lastError = undefined;
    this.context.snapshotChanged?.(this);
  }

  /**
   * Swaps in a view built from the live store and saves `data` (what it was compiled from) as
   * the last good snapshot. The first one after a start from the cache ends the stale period.
   */
  protected swapLive(view: BookView, data: unknown, origin?: RoutesOrigin): void {
    this.swap(view, origin);
    const stale = this.staleSince;
    if (stale !== undefined) {
      this.staleSince = undefined;
      this.context.logger.info(
        { cachedAt: stale.toISOString() },
        `${this.label}: the store answers again, live routes replace the cached ones`,
      );
    }
    this.#lastGood?.save(data);
  }

  /**
   * The store did not answer at start (`cause`): serve the last-good cache, compiled by
   * `restore`, marked stale, and resolve; the subclass keeps trying the store and calls
   * `swapLive` when it answers. Without a usable cache, rejects with `cause` extended by why.
   */
  protected async startFromLastGood(
    cause: Error,
    restore: (data: unknown) => BookView | Promise<BookView>,
    origin?: RoutesOrigin,
  ): Promise<void> {
    const lg = this.#lastGood;
    if (lg === undefined) throw cause;
    let view: BookView;
    let savedAt: Date;
    try {
      const saved = await lg.load();
      if (saved === undefined) throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `no last-good cache at ${lg.file}`);
      savedAt = saved.savedAt;
      try {
        view = await restore(saved.data);
      } catch (e) {
        throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `last-good cache ${lg.file}: ${(e as Error).message}`);
      }
    } catch (e) {
      const why = (e as Error).message;
      if (!why.startsWith('no last-good cache')) {
        this.context.logger.error({ error: why, cache: lg.file }, `${this.label}: last-good cache ignored`);
      }
      throw new SwitchboardError(
        'SWB_ERR_ADDRESS_BOOK',
        `${cause.message} (${why}${why.startsWith('no ') ? '' : ', ignored'})`,
        {
          cause,
        },
      );
    }
    this.swap(view, origin === undefined ? undefined : { ...origin, changedAt: savedAt.toISOString() });
    this.staleSince = savedAt;
    const age = Date.now() - savedAt.getTime();
    this.context.logger.warn(
      {
        error: cause.message,
        cache: lg.file,
        savedAt: savedAt.toISOString(),
        ageSeconds: Math.round(age / 1000),
        stale: true,
      },
      `${this.label}: the store does not answer, serving stale routes from the last-good cache saved ${formatAge(age)} ago`,
    );
  }

  /** Records and logs a refresh that failed; the current view keeps serving. */
  protected keepPrevious(error: unknown, what: string, fields: Record<string, unknown> = {}): void {
    this.lastError = error instanceof Error ? error.message : String(error);
    this.context.logger.warn(
      { error: this.lastError, ...fields },
      `${this.label}: ${what}, keeping the previous routes`,
    );
  }
}
