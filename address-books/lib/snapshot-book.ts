/**
 * What the `bfe`, `sqlite` and `etcd` books have in common (README.md): one immutable compiled
 * view, swapped whole, and every read the runtime and the CLI make of it. A subclass only says
 * where the table comes from (`start`, `close`, its refresh loop) and calls `swap` with a new
 * view or `keepPrevious` with the error that stopped one.
 */
import type { PluginContext } from '../../src/plugin.ts';
import type {
  AddressBook,
  BackendEntry,
  BackendLister,
  Candidates,
  Request,
  RoutingTableSource,
} from '../../src/types.ts';
import { type Explanation, explain } from '../bfe/explain.ts';
import { Snapshot } from '../bfe/snapshot.ts';

/**
 * One immutable compiled view of a source: a bfe `Snapshot` (which implements it) or the
 * classic host → backends list of the sqlite book.
 */
export interface BookView {
  /** The plain data it was compiled from (a RoutingTable, or the classic list). */
  readonly table: unknown;
  findAddresses(request: Request): Candidates | undefined;
  backends(): Iterable<BackendEntry>;
}

/** An address book over one swappable BookView; subclasses supply the source. */
export abstract class SnapshotBook implements AddressBook, RoutingTableSource, BackendLister {
  /** `address-books.<name>`: the start of every log line and error of this book. */
  protected readonly label: string;
  protected readonly context: PluginContext;
  #view: BookView | undefined;
  /** Increases by one on every snapshot swap. */
  version = 0;
  /** The error of the last failed refresh, cleared by a good one. */
  lastError: string | undefined;

  constructor(label: string, context: PluginContext) {
    this.label = label;
    this.context = context;
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

  /** How the current view routes `request`, step by step (`switchboard route`); bfe tables only. */
  explain(request: Request): Explanation | undefined {
    const view = this.#view;
    return view instanceof Snapshot ? explain(view, request) : undefined;
  }

  /** True once a first view has been swapped in. */
  protected get loaded(): boolean {
    return this.#view !== undefined;
  }

  /** Replaces the view (one reference), bumps `version` and tells the runtime. */
  protected swap(view: BookView): void {
    this.#view = view;
    this.version++;
    this.lastError = undefined;
    this.context.snapshotChanged?.(this);
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
