/**
 * The address book a worker thread routes with: the main thread's routing snapshot, received as
 * plain data and compiled here (`bfe` tables with `compileRoutingTable`, file-book entries with
 * `buildMatcher`). It never loads or watches anything: `apply` swaps the compiled snapshot when
 * the main thread sends a new one. It deliberately does not list its backends, so the worker's
 * runtime runs no health checks and never prunes the shared registry (the main thread does both).
 */
import { compileRoutingTable } from '../../address-books/bfe/compile.ts';
import type { Snapshot } from '../../address-books/bfe/snapshot.ts';
import { buildMatcher } from '../../address-books/file/matcher.ts';
import type { FileEntry } from '../../address-books/file/parse.ts';
import type { BookSpec } from '../../panels/worker/protocol.ts';
import { InternalError } from '../../src/base/errors.ts';
import type { AddressBookFactory, PluginContext } from '../../src/contracts/plugin.ts';
import type { AddressBook, Candidates, Request } from '../../src/contracts/types.ts';

type Lookup = (request: Request) => Candidates | undefined;

/** A compiled spec: its lookup, and the bfe snapshot the next one may reuse parts of. */
interface Compiled {
  readonly lookup: Lookup;
  readonly snapshot: Snapshot | undefined;
}

/**
 * Compiles a table or entry spec into a lookup function; a bfe table takes the unchanged parts
 * of `previous` (address-books/bfe/reuse.ts), so a worker's swap builds only what changed.
 */
function compile(spec: BookSpec, previous?: Snapshot): Compiled {
  if (spec.kind === 'bfe') {
    const snapshot = compileRoutingTable(spec.table, { source: 'worker snapshot', previous });
    return { lookup: (r) => snapshot.findAddresses(r), snapshot };
  }
  if (spec.kind === 'file') {
    const matcher = buildMatcher((spec.entries ?? []) as FileEntry[]);
    return { lookup: (r) => matcher.match(r.host, r.path), snapshot: undefined };
  }
  throw new InternalError(`worker: a ${spec.kind} book is not a snapshot`);
}

/** A worker's book over the main thread's snapshots. */
export class SnapshotBook implements AddressBook {
  #compiled: Compiled;
  #source: number;
  version = 1;

  constructor(spec: BookSpec) {
    this.#compiled = compile(spec);
    this.#source = spec.kind === 'module' ? 0 : spec.version;
  }

  async start(): Promise<void> {}
  async close(): Promise<void> {}

  findAddresses(request: Request): Candidates | undefined {
    return this.#compiled.lookup(request);
  }

  /** Swaps in a newer snapshot (an older or identical source version is ignored). */
  apply(spec: BookSpec): void {
    if (spec.kind === 'module' || spec.version === this.#source) return;
    this.#compiled = compile(spec, this.#compiled.snapshot);
    this.#source = spec.version;
    this.version++;
  }
}

/** The factory a worker's LoadedConfig uses; `onCreate` hands the book to the worker loop. */
export function snapshotBookFactory(onCreate: (book: SnapshotBook) => void): AddressBookFactory {
  return {
    name: 'worker-snapshot',
    create(spec: BookSpec, _context: PluginContext) {
      const book = new SnapshotBook(spec);
      onCreate(book);
      return book;
    },
  };
}

/**
 * A custom book built in the worker from its module, seen only through `findAddresses`: its
 * backend list (if any) is the main thread's business (health, registry), not each worker's.
 */
export function findOnly(book: AddressBook): AddressBook {
  return {
    start: () => book.start(),
    close: () => book.close(),
    findAddresses: (r) => book.findAddresses(r),
    get version() {
      return book.version;
    },
  };
}
