/**
 * The store-backed books whose views may be bfe `Snapshot`s (the `bfe`, `sqlite` and `etcd`
 * books): `SnapshotBook` (../lib/snapshot-book.ts: the view, its swap, every read) plus what
 * only a bfe snapshot can do, so the shared base imports nothing of this book.
 */
import type { Request } from '../../src/contracts/types.ts';
import { SnapshotBook } from '../lib/snapshot-book.ts';
import { type Explanation, explain } from './explain.ts';
import { Snapshot } from './snapshot.ts';

/** A `SnapshotBook` that explains bfe routes and hands its serving snapshot to the next build. */
export abstract class BfeSnapshotBook extends SnapshotBook {
  /** How the current view routes `request`, step by step (`switchboard route`); bfe tables only. */
  explain(request: Request): Explanation | undefined {
    const view = this.view;
    return view instanceof Snapshot ? explain(view, request) : undefined;
  }

  /** The bfe snapshot serving now, if the view is one: what the next build may reuse. */
  protected get liveSnapshot(): Snapshot | undefined {
    const view = this.view;
    return view instanceof Snapshot ? view : undefined;
  }
}
